/**
 * Every path the documentation names is one the server serves (issue 43: docs/operations.md told
 * load balancers to check `GET /health`, which was 404). Read from docs/*.md and the README:
 *
 * - every `METHOD /path` (GET, POST, PUT, PATCH, DELETE), in code or in plain text: requested with
 *   that method, and neither the unknown-route 404 nor a 405 may answer;
 * - every path in inline code without a method (`/console/shops`, `/api/v1/health`): requested with
 *   GET, and the unknown-route 404 may not answer (a 405 says the path exists for another method).
 *
 * docs/api.md writes API paths relative to /api/v1, as it says at its start; every other document
 * writes GET paths and paths without a method whole (a GET path is what an operator pastes into a
 * browser or a monitor). Other documents may name an operation the API reference's way
 * (`POST /invoices`): a non-GET path that is not served as written is asked under /api/v1.
 * Left out: other servers' paths (a TRON provider's /wallet/ and /walletsolidity/, toncenter's
 * /api/v3/ and tonapi's /v2/, the simulator's
 * /_sim/, a rate source's /simple/price), files (/etc/…, /usr/…), folders and prefixes (ending in
 * `/`, or with `*` or `…`), and what a shop appends to the folder it is given (`/submit.php`).
 * The control routes of `gatewayd dev` (/_dev/…) are asked of a dev instance, with its token.
 * A path the documents say is gone (the old return hop) must answer 404.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { DEV_TOKEN_HEADER, newDevToken } from '../../src/cli/dev-token.js';
import { devRoutes } from '../../src/devnet/dev.routes.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { NETWORKS } from '../../src/lib/tron.js';
import type { AppDeps } from '../../src/app-deps.js';
import { startTestApp } from '../helpers/app.js';

const OTHER_SERVERS = /^\/(walletsolidity|wallet|_sim|simple|api\/v3|v2)(\/|$)/;
const FILES = /^\/(etc|usr|var|opt|tmp|home|run|srv|root)(\/|$)/;
/** Mentions that are not a path of this server, each for its reason. */
const NOT_PATHS = new Map([
  ['/api/v1', 'the prefix of every API path'],
  ['/submit.php', 'what an Epay shop appends to the folder URL it is given'],
]);
/** Paths the documents name as gone: they must stay 404. */
const GONE = new Set(['/shops/return/{connection}/{order}']);
/** Where a path of docs/api.md is already whole: the site's own roots outside the API. */
const WHOLE = /^\/(api|pay|console|epay|shops|guides|_dev)(\/|$)/;

interface Documented {
  file: string;
  method: string | undefined;
  written: string;
  path: string;
}

function markdownFiles(): string[] {
  const root = projectRoot();
  return [
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'README.md',
  ];
}

function documentedPaths(): Documented[] {
  const found = new Map<string, Documented>();
  const add = (file: string, method: string | undefined, raw: string) => {
    const written = raw.split(/[?#]/)[0]!.replace(/[.,:;]+$/, '');
    if (written.length < 2 || OTHER_SERVERS.test(written) || FILES.test(written) || NOT_PATHS.has(written)) return;
    if (written.endsWith('/') || /[*…]|\.\.\./.test(written)) return;
    const path = file === 'docs/api.md' && !WHOLE.test(written) ? `/api/v1${written}` : written;
    found.set(`${file} ${method ?? ''} ${path}`, { file, method, written, path });
  };
  for (const file of markdownFiles()) {
    const text = readFileSync(join(projectRoot(), file), 'utf8');
    for (const m of text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s`|)"'\]<>]*)/g)) add(file, m[1], m[2]!);
    // Inline code outside fenced blocks (a fence's backticks would pair with the wrong ones).
    const prose = text.replace(/^```[\s\S]*?^```/gm, '');
    for (const m of prose.matchAll(/`([^`\n]+)`/g)) {
      const span = m[1]!.trim();
      if (span.startsWith('/') && !/\s/.test(span)) add(file, undefined, span);
    }
  }
  // A path written with its method is not asked again without it.
  const withMethod = new Set([...found.values()].filter((d) => d.method).map((d) => `${d.file} ${d.path}`));
  return [...found.values()].filter((d) => d.method !== undefined || !withMethod.has(`${d.file} ${d.path}`));
}

interface Answer {
  status: number;
  unknownRoute: boolean;
}

async function ask(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${baseUrl}${path.replace(/\{[a-z_]+\}/g, 'x')}`, {
    method,
    headers: { accept: 'application/json', ...headers },
    redirect: 'manual',
  });
  const body = await res.text();
  // An unknown resource may be 404 too: with a placeholder filled in, only the unknown-route answer counts.
  return { status: res.status, unknownRoute: res.status === 404 && (!path.includes('{') || body.includes('No such resource')) };
}

test('every path in docs/ and the README is served, with the method it is documented with', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  // A dev instance for the control routes: the simulated node, the routes and their token.
  const node = await startSimulatedTron({ usdtContract: NETWORKS.devnet.usdtContract });
  t.after(() => node.close());
  const token = newDevToken();
  let devDeps: AppDeps | undefined;
  const dev = await startTestApp({
    devMode: true,
    config: { tron: { network: 'devnet', api_url: node.url } },
    beforeCreate: (deps) => {
      devDeps = deps;
    },
    beforeServe: (devApp) => devRoutes(devApp, devDeps!, { node, solidityLag: 1, blockIntervalMs: 3000 }, token),
  });
  t.after(() => dev.close());

  const paths = documentedPaths();
  assert.ok(paths.filter((p) => p.method === 'GET').length > 20, 'GET paths found');
  assert.ok(paths.filter((p) => p.method && p.method !== 'GET').length > 50, 'POST, PATCH and DELETE paths found');
  assert.ok(paths.filter((p) => !p.method).length > 20, 'paths without a method found');
  const wrong: string[] = [];
  for (const { file, method, written, path } of paths) {
    const on = path.startsWith('/_dev/')
      ? { url: dev.baseUrl, headers: { [DEV_TOKEN_HEADER]: token } }
      : { url: app.baseUrl, headers: {} as Record<string, string> };
    let answer = await ask(on.url, method ?? 'GET', path, on.headers);
    if (GONE.has(written)) {
      if (answer.status !== 404) wrong.push(`${file}: ${path} is said to be gone, but answers ${answer.status}`);
      continue;
    }
    if (method && method !== 'GET' && file !== 'docs/api.md' && !WHOLE.test(written) && (answer.unknownRoute || answer.status === 405)) {
      answer = await ask(on.url, method, `/api/v1${written}`, on.headers);
    }
    const named = `${file}: ${method ?? '(no method)'} ${path}`;
    if (answer.unknownRoute) wrong.push(`${named} is 404`);
    else if (method && answer.status === 405) wrong.push(`${named} is 405: the path has no ${method}`);
  }
  assert.deepEqual(wrong, []);
});

test('the check itself fails on a path that is not served, on a wrong method and on a gone path that answers', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  assert.equal((await ask(app.baseUrl, 'GET', '/api/v1/no-such-thing')).unknownRoute, true);
  assert.equal((await ask(app.baseUrl, 'GET', '/console/no-such-page')).unknownRoute, true);
  assert.equal((await ask(app.baseUrl, 'DELETE', '/api/v1/health')).status, 405);
  assert.equal((await ask(app.baseUrl, 'GET', '/api/v1/invoices/{id}')).unknownRoute, false, 'a placeholder filled in: not an unknown route');
  assert.equal((await ask(app.baseUrl, 'GET', '/api/v1/nothing/{id}')).unknownRoute, true);
  const gone = await ask(app.baseUrl, 'GET', '/shops/return/{connection}/{order}');
  assert.equal(gone.status, 404);
});
