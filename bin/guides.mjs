#!/usr/bin/env node
// `npm run build` (after the bundle): the guides an instance serves at /guides/, rendered from the
// repository's docs/ into dist/guides/ (one HTML fragment per guide and guides.json, their titles in
// order). The packaged executable embeds that folder like the templates. Links between served guides
// point at /guides/NAME#anchor; links to files an instance does not serve keep their text only.
// Heading anchors are GitHub's (lower case, punctuation dropped, spaces to hyphens, -1, -2 on repeats),
// so an anchor written for the repository's own view works on the instance too.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked } from 'marked';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'guides');

/** The guides an instance serves, in the order its index lists them: for merchants, integrators, operators. */
export const GUIDES = ['shops', 'payments', 'operations', 'configuration', 'api', 'security', 'test-networks'];

export function slug(text) {
  return text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One guide's markdown as an HTML fragment and its title (the first heading). */
export function renderGuide(markdown) {
  const seen = new Map();
  let title;
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading({ tokens, depth, text }) {
        const inner = this.parser.parseInline(tokens);
        const base = slug(text);
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        const id = n === 0 ? base : `${base}-${n}`;
        title ??= text.replace(/[`*_]/g, '');
        return `<h${depth} id="${escapeHtml(id)}"><a class="anchor" href="#${escapeHtml(id)}" aria-hidden="true">#</a>${inner}</h${depth}>\n`;
      },
      link({ href, tokens }) {
        const inner = this.parser.parseInline(tokens);
        const target = guideHref(href);
        if (target === undefined) return `<span class="file-ref">${inner}</span>`;
        const external = /^https?:\/\//.test(target);
        return `<a href="${escapeHtml(target)}"${external ? ' rel="noopener noreferrer"' : ''}>${inner}</a>`;
      },
      table(token) {
        return `<div class="table-scroll">${marked.Renderer.prototype.table.call(this, token)}</div>`;
      },
    },
  });
  const html = marked.parse(markdown);
  return { title: title ?? 'Guide', html };
}

/** Where a link of the docs points on an instance; undefined: a file the instance does not serve. */
function guideHref(href) {
  if (/^(https?:|mailto:)/.test(href)) return href;
  if (href.startsWith('#')) return href;
  const m = /^(?:\.\/)?(?:docs\/)?([a-z0-9-]+)\.md(#.*)?$/.exec(href);
  if (m && GUIDES.includes(m[1])) return `/guides/${m[1]}${m[2] ?? ''}`;
  return undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const index = [];
  for (const name of GUIDES) {
    const { title, html } = renderGuide(readFileSync(join(root, 'docs', `${name}.md`), 'utf8'));
    writeFileSync(join(out, `${name}.html`), html);
    index.push({ name, title });
  }
  writeFileSync(join(out, 'guides.json'), `${JSON.stringify(index, null, 2)}\n`);
  process.stdout.write(`guides: ${index.length} guides from docs/ into dist/guides/\n`);
}
