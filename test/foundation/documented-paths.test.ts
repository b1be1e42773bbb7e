/**
 * Every `GET /…` path the documentation names is one the server serves (issue 43: docs/operations.md
 * told load balancers to check `GET /health`, which is 404; the path is /api/v1/health). docs/api.md
 * writes API paths relative to /api/v1, as it says at its start; every other document writes them
 * whole. Paths of other servers (a TRON provider's /walletsolidity/…, the simulator's /_sim/…) are
 * left out. A path is a route of the OpenAPI document, or the server does not answer it 404 (with
 * its placeholders filled in: the unknown-route 404 only).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { startTestApp } from '../helpers/app.js';

const OTHER_SERVERS = /^\/(walletsolidity|wallet|_sim)\//;

function documentedPaths(): Array<{ file: string; path: string }> {
  const root = projectRoot();
  const files = [
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'README.md',
  ];
  const found: Array<{ file: string; path: string }> = [];
  for (const file of files) {
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(/`GET (\/[^`\s]*)`/g)) {
      const written = m[1]!.split('?')[0]!;
      if (OTHER_SERVERS.test(written)) continue;
      const path = file === 'docs/api.md' && !/^\/(api|pay|console)(\/|$)/.test(written) ? `/api/v1${written}` : written;
      found.push({ file, path });
    }
  }
  return found;
}

test('every GET path in docs/ and the README is served: a route of the OpenAPI document, or not 404', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const paths = documentedPaths();
  assert.ok(paths.length > 30, `found ${paths.length}`);
  const spec = (await app.client().get('/openapi.json')).body as { paths: Record<string, unknown> };
  const routes = new Set(Object.keys(spec.paths));
  const wrong: string[] = [];
  for (const { file, path } of paths) {
    if (routes.has(path)) continue;
    // Not in the document (a page, a shop protocol's route): asked with each placeholder filled in.
    // An unknown resource may be 404 too, so only the unknown-route answer counts as not served.
    const res = await fetch(`${app.baseUrl}${path.replace(/\{[a-z_]+\}/g, 'x')}`, { headers: { accept: 'application/json' }, redirect: 'manual' });
    const body = await res.text();
    if (res.status === 404 && (!path.includes('{') || body.includes('No such resource'))) wrong.push(`${file}: GET ${path} is 404`);
  }
  assert.deepEqual(wrong, []);
});
