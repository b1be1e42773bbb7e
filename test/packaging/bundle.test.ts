/**
 * bin/gatewayd runs dist/bundle/ (bin/bundle.mjs, written by `npm run build` after tsc), falls back
 * to dist/src/ when tsc wrote it last, and `serve` loads prom-client only with metrics enabled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../helpers/app.js';
import { freePort, GATEWAYD_BIN, startGateway } from '../helpers/process.js';

const ROOT = resolve(GATEWAYD_BIN, '../..');

/** Starts `serve` with a module hook that writes down every file Node loads; returns those under the project. */
async function loadedFiles(config: Record<string, Record<string, unknown>> = {}): Promise<string[]> {
  const dir = tempDir('gatewayd-bundle-');
  const list = join(dir, 'loaded.txt');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';\nimport { appendFileSync } from 'node:fs';\n` +
      `registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(list)}, url + '\\n'); return next(url, context); } });\n`,
  );
  const gateway = await startGateway({ dir, config, env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` } });
  assert.equal(await gateway.stop(), 0);
  const root = pathToFileURL(ROOT).href;
  return readFileSync(list, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith(root))
    .map((url) => url.slice(root.length + 1));
}

/** `npm run build` writes the bundle after dist/src/; after `tsc` alone, dist/src/ runs (the next test). */
const bundleIsCurrent = (): boolean => {
  const builtAt = (path: string) => statSync(join(ROOT, path), { throwIfNoEntry: false })?.mtimeMs ?? -1;
  return builtAt('dist/bundle/main.js') >= builtAt('dist/src/main.js');
};

test('serve runs the bundle: its own code from dist/bundle/ only, prom-client only when metrics are enabled', async (t) => {
  if (!bundleIsCurrent()) return t.skip('tsc wrote dist/src/ after the bundle: run `npm run build`');
  const off = await loadedFiles();
  const ours = off.filter((f) => f.startsWith('dist/') || f.startsWith('src/'));
  assert.ok(ours.includes('dist/bundle/main.js'), `dist/bundle/main.js not loaded: ${ours.join(' ')}`);
  assert.deepEqual(
    ours.filter((f) => !f.startsWith('dist/bundle/')),
    [],
    'nothing from dist/src/',
  );
  // From node_modules only the SQLite addon's package, which loads its .node file by path (argon2's
  // is loaded on the first password check); everything else is in the bundle.
  const packages = new Set(off.filter((f) => f.startsWith('node_modules/')).map((f) => f.split('/')[1]));
  assert.deepEqual([...packages], ['better-sqlite3']);
  assert.ok(!off.some((f) => /\/prometheus-[A-Z0-9]+\.js$/.test(f)), 'prom-client is not loaded with metrics off');

  const on = await loadedFiles({ metrics: { enabled: true, listen: `127.0.0.1:${await freePort()}` } });
  assert.ok(
    on.some((f) => /^dist\/bundle\/prometheus-[A-Z0-9]+\.js$/.test(f)),
    'prom-client is loaded with metrics on',
  );
});

test('bin/gatewayd runs dist/src/main.js when tsc wrote it after the bundle, or when there is no bundle', () => {
  // A copy of bin/gatewayd beside two stand-in programs that say which one ran.
  const root = tempDir('gatewayd-entry-');
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'dist', 'src'), { recursive: true });
  copyFileSync(GATEWAYD_BIN, join(root, 'bin', 'gatewayd'));
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  const program = (name: string) => `export async function main() { process.stdout.write('${name}'); return 0; }\n`;
  writeFileSync(join(root, 'dist', 'src', 'main.js'), program('src'));
  const ran = () => spawnSync(process.execPath, [join(root, 'bin', 'gatewayd'), 'version'], { encoding: 'utf8' }).stdout;

  assert.equal(ran(), 'src', 'no bundle yet');
  mkdirSync(join(root, 'dist', 'bundle'));
  writeFileSync(join(root, 'dist', 'bundle', 'main.js'), program('bundle'));
  const at = (path: string, seconds: number) => utimesSync(join(root, 'dist', path, 'main.js'), seconds, seconds);
  at('src', 1_000_000);
  at('bundle', 1_000_010);
  assert.equal(ran(), 'bundle', 'the bundle, built after tsc');
  at('src', 1_000_020);
  assert.equal(ran(), 'src', 'tsc ran after the bundle was built');
});
