/**
 * The instance's own guides at /guides/: the repository's docs (shops, payments, operations, ...)
 * rendered at build time into dist/guides/ (bin/guides.mjs) and embedded in the single executable,
 * so a merchant or operator reads the guide of the version they run, on their own instance. Public
 * pages: the guides hold no secret and name no account.
 */
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { readAssetText } from '../lib/assets.js';
import { pageContext, type Renderer } from './render.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config'>;

interface GuideEntry {
  name: string;
  title: string;
}

let index: GuideEntry[] | undefined;
const bodies = new Map<string, string>();

/** The guides this build rendered; none when the build did not render them (then /guides says so). */
function guides(): GuideEntry[] {
  if (index) return index;
  try {
    index = JSON.parse(readAssetText('dist/guides/guides.json')) as GuideEntry[];
  } catch {
    index = [];
  }
  return index;
}

function body(name: string): string {
  let html = bodies.get(name);
  if (html === undefined) {
    html = readAssetText(`dist/guides/${name}.html`);
    bodies.set(name, html);
  }
  return html;
}

export function guidesPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  app.get('/guides', (c) => c.redirect('/guides/', 301));
  app.get('/guides/', (c) => {
    const ctx = pageContext(c, deps);
    return renderer.page(c, ctx, 'guides', { title: ctx.t('page.guides.title') }, { guides: guides() });
  });
  app.get('/guides/:name', (c) => {
    const ctx = pageContext(c, deps);
    const entry = guides().find((g) => g.name === c.req.param('name'));
    if (!entry) {
      return renderer.page(
        c,
        ctx,
        'message',
        { title: ctx.t('page.error.not_found_title') },
        { message: ctx.t('page.guides.not_found'), back: '/guides/' },
        404,
      );
    }
    return renderer.page(c, ctx, 'guide', { title: entry.title }, { guide: entry, body: body(entry.name), english: ctx.locale !== 'en' });
  });
}
