#!/usr/bin/env node
// `npm run build:binary`: dist/gatewayd, one linux executable built offline on the Node.js line
// the project ships (BINARY_LINE in bin/node-runtime.mjs, fetched once from the npm registry into
// .node-<major>/ whatever node runs this script), with Node's single-executable support.
// `--arch arm64` (or x64, the default) builds for that CPU, `--out FILE` writes FILE instead; the
// build itself always runs on linux-x64 (`npm run build:release` builds both, bin/build-release.mjs):
//   1. esbuild bundles src/ops/sea-main.ts into one CommonJS file; native addons are redirected to
//      the embedded loader; the libraries only some paths import (LIBRARIES) are bundled each on
//      its own, embedded as assets and compiled on their first import;
//   2. every file under migrations/, templates/, locales/, static/ and public/ is listed now (new files are
//      picked up without touching this script) and embedded as an asset with a manifest;
//   3. a stripped copy of that node is the base, and `node --build-sea` writes the executable.
// With V8's code cache (useCodeCache): the bundle's compiled code is embedded, so start-up does not
// compile it and V8 holds less (issue 32: 3-4 MB less anonymous memory idle, ~50 ms less CPU to the
// first healthy answer). The price: two builds of the same tree differ in those bytes (V8's cache
// is not deterministic). The cache is made by this machine's V8, so a build for another CPU has
// none (it compiles the bundle at start, as a plain node does). No startup snapshot (useSnapshot): it would need the whole program to
// start from v8.startupSnapshot, without native addons loaded while it is taken.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import { copyFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { BINARY_LINE, RELEASE_ARCHES, ensureNode, ensureTargetNode, fetchPackage } from './node-runtime.mjs';
import { ESBUILD_COMMON, zodEnglishOnly } from './bundle.mjs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
/** require() for Node's built-in modules only, as an embedded library gets it (src/ops/embedded.ts). */
const builtinRequire = (id) => {
  const found = process.getBuiltinModule(id);
  if (found === undefined) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  return found;
};
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const targetArch = option('--arch', 'x64');
if (!RELEASE_ARCHES.includes(targetArch)) {
  console.error(`build-binary: --arch takes ${RELEASE_ARCHES.join(' or ')}, not ${targetArch ?? 'nothing'}`);
  process.exit(2);
}
const cross = targetArch !== 'x64';
const out = resolve(option('--out', join(root, 'dist', 'gatewayd')));
const work = join(root, 'dist', cross ? `sea-${targetArch}` : 'sea');
// dist/guides: the guides `npm run build` renders from docs/ (bin/guides.mjs), served at /guides/.
const ASSET_DIRS = ['migrations', 'templates', 'locales', 'static', 'public', 'dist/guides'];
const SENTINEL = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const MANIFEST_KEY = 'gatewayd-manifest.json';

const started = Date.now();
const step = (msg) => process.stdout.write(`build-binary: ${msg}\n`);

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`build-binary: builds run on linux-x64 only (this is ${process.platform}-${process.arch})`);
  process.exit(2);
}
// This machine's node runs the build; the target's node is the base of the executable.
const builder = ensureNode(BINARY_LINE, step);
const embedded = ensureTargetNode(BINARY_LINE, targetArch, step);
const nodeBinary = builder.node;
if (!readFileSync(embedded.node).includes(SENTINEL)) {
  console.error(`build-binary: ${embedded.node} has no single-executable fuse`);
  process.exit(2);
}

if (!existsSync(join(root, 'dist', 'guides', 'guides.json'))) {
  console.error('build-binary: dist/guides/ is missing; run `npm run build` first (it renders the guides from docs/)');
  process.exit(2);
}
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// 1. Bundle.
const esbuild = require('esbuild');
// better-sqlite3 13 ships a prebuilt N-API addon per platform in its package; one compiled from
// source (build/Release, e.g. by `npm run build:sqlite`) takes precedence, as it does at run time.
// For another CPU: its prebuilt addon from the same package, and argon2's platform package of the
// same version from the npm registry (npm installs only this machine's), kept in .release-cache/.
const sqliteAddon = (cross ? [`prebuilds/linux-${targetArch}.node`] : ['build/Release/better_sqlite3.node', 'prebuilds/linux-x64.node'])
  .map((f) => join(dirname(require.resolve('better-sqlite3/package.json')), f))
  .find((f) => existsSync(f));
if (!sqliteAddon) {
  console.error(`build-binary: better-sqlite3 ships no prebuilt addon for linux-${targetArch}`);
  process.exit(1);
}
function argon2Addon() {
  const name = `argon2-linux-${targetArch}-gnu`;
  const file = `argon2.linux-${targetArch}-gnu.node`;
  if (!cross) return require.resolve(`@node-rs/${name}/${file}`);
  const version = JSON.parse(readFileSync(require.resolve('@node-rs/argon2/package.json'), 'utf8')).version;
  const dir = join(root, '.release-cache', `${name}-${version}`);
  if (!existsSync(join(dir, 'package', file))) fetchPackage(`@node-rs/${name}@${version}`, dir, step);
  return join(dir, 'package', file);
}
const addonFiles = { 'better_sqlite3.node': sqliteAddon, 'argon2.node': argon2Addon() };
const loader = JSON.stringify(join(root, 'src', 'ops', 'embedded.ts'));
const packagingPlugin = {
  name: 'gatewayd-packaging',
  setup(build) {
    // better-sqlite3 finds its addon in lib/binding.js (a file path, which a SEA cannot require);
    // argon2 through its platform package.
    build.onResolve({ filter: /^\.\/binding$/ }, (args) =>
      /[\\/]better-sqlite3[\\/]lib$/.test(args.resolveDir) ? { path: 'sqlite-binding', namespace: 'gw-virtual' } : undefined,
    );
    build.onResolve({ filter: /^@node-rs\/argon2$/ }, () => ({ path: 'argon2', namespace: 'gw-virtual' }));
    // supports-color (pulled in through tronweb's axios) probes the terminal and warns at start.
    build.onResolve({ filter: /^supports-color$/ }, () => ({ path: 'supports-color', namespace: 'gw-virtual' }));
    build.onLoad({ filter: /.*/, namespace: 'gw-virtual' }, (args) => {
      const contents = {
        'sqlite-binding': `const { loadNativeAddon } = require(${loader});\nexports.getBinding = () => loadNativeAddon('better_sqlite3.node');`,
        argon2: `const { loadNativeAddon } = require(${loader});\nmodule.exports = loadNativeAddon('argon2.node');`,
        'supports-color': 'module.exports = { stdout: false, stderr: false, supportsColor: () => false };',
      }[args.path];
      return { contents, loader: 'js', resolveDir: root };
    });
  },
};
// The libraries that only some paths import (mail, the checkout's QR code, PostgreSQL, Google
// sign-in, metrics), each with the export the build checks. Each is bundled on its own and embedded
// as an asset (`lib:<name>`), compiled when first imported (loadEmbeddedLibrary). Why (issue 32):
// the whole main script is paged in from the executable at start and copied, so each byte of it
// costs two of idle RSS (3 MB of never-run code measured +5.7 MB); moving these 0.7 MB of code no
// idle server runs out of it took 2 MB off (BENCHMARKS.md, "Footprint, third pass"). Each must
// load only Node's built-in modules once bundled.
const LIBRARIES = { nodemailer: 'createTransport', qrcode: 'toString', pg: 'Pool', jose: 'jwtVerify', 'prom-client': 'Registry' };
const libraryPlugin = {
  name: 'gatewayd-libraries',
  setup(build) {
    const names = new RegExp(`^(${Object.keys(LIBRARIES).join('|')})$`);
    build.onResolve({ filter: names }, (args) => ({ path: args.path, namespace: 'gw-library' }));
    build.onLoad({ filter: /.*/, namespace: 'gw-library' }, (args) => ({
      contents: `const { loadEmbeddedLibrary } = require(${loader});\nmodule.exports = loadEmbeddedLibrary(${JSON.stringify(args.path)});`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};
const libraryFiles = {};
for (const [name, probe] of Object.entries(LIBRARIES)) {
  const file = join(work, `lib-${name}.cjs`);
  await esbuild.build({
    ...ESBUILD_COMMON,
    stdin: { contents: `module.exports = require(${JSON.stringify(name)});`, resolveDir: root, loader: 'js' },
    format: 'cjs',
    target: `node${BINARY_LINE}`,
    outfile: file,
    plugins: [packagingPlugin],
  });
  // The same loading as at run time (embedded.ts): built-in modules only, the export there.
  const mod = { exports: {} };
  vm.compileFunction(readFileSync(file, 'utf8'), ['exports', 'require', 'module'])(mod.exports, builtinRequire, mod);
  if (typeof mod.exports[probe] !== 'function') {
    console.error(`build-binary: the embedded ${name} has no ${probe}() once bundled`);
    process.exit(1);
  }
  libraryFiles[name] = file;
}

const bundlePath = join(work, 'gatewayd.cjs');
const result = await esbuild.build({
  ...ESBUILD_COMMON,
  entryPoints: [join(root, 'src', 'ops', 'sea-main.ts')],
  format: 'cjs',
  target: `node${BINARY_LINE}`,
  outfile: bundlePath,
  plugins: [packagingPlugin, libraryPlugin, zodEnglishOnly],
  // import.meta.url has no meaning in a SEA; the asset lookup that uses it is replaced at start.
  define: { 'import.meta.url': '"file:///gatewayd"' },
});
const libraryBytes = Object.values(libraryFiles).reduce((sum, f) => sum + statSync(f).size, 0);
step(
  `bundle ${(statSync(bundlePath).size / 1e6).toFixed(1)} MB from ${Object.keys(result.metafile.inputs).length} modules, ` +
    `${Object.keys(LIBRARIES).join(', ')} beside it (${(libraryBytes / 1e6).toFixed(1)} MB)`,
);

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
const addonDigests = Object.fromEntries(
  Object.entries(addonFiles).map(([name, path]) => [name, createHash('sha256').update(readFileSync(path)).digest('hex')]),
);
writeFileSync(manifestPath, JSON.stringify({ version, files, addons: addonDigests }));
const assets = { [MANIFEST_KEY]: manifestPath };
for (const f of files) assets[`file:${f}`] = join(root, f);
for (const [name, path] of Object.entries(addonFiles)) assets[`addon:${name}`] = path;
for (const [name, path] of Object.entries(libraryFiles)) assets[`lib:${name}`] = path;
step(`${files.length} files (${ASSET_DIRS.filter((d) => existsSync(join(root, d))).join(', ')}) and ${Object.keys(addonFiles).length} native addons embedded`);

// 3. The base executable (a stripped copy of that node) and `node --build-sea`, run by that same node.
const base = join(work, 'node-base');
copyFileSync(embedded.node, base);
chmodSync(base, 0o755);
// binutils' strip knows this machine's CPU only; Debian's binutils-aarch64-linux-gnu has arm64's.
const strip = cross ? 'aarch64-linux-gnu-strip' : 'strip';
try {
  execFileSync(strip, [base], { stdio: 'inherit' });
} catch {
  step(`${strip} not found or failed: the binary stays unstripped (larger, same behaviour)`);
}
const seaConfig = join(work, 'sea-config.json');
rmSync(out, { force: true });
writeFileSync(
  seaConfig,
  JSON.stringify(
    { main: bundlePath, executable: base, output: out, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: !cross, assets },
    null,
    2,
  ),
);
try {
  execFileSync(nodeBinary, ['--build-sea', seaConfig], { stdio: 'pipe' });
} catch (err) {
  console.error(`build-binary: node --build-sea failed:\n${err.stderr ?? err.message}`);
  process.exit(1);
}
chmodSync(out, 0o755);
const mb = (file) => `${(statSync(file).size / 1e6).toFixed(1)} MB`;
step(
  `wrote ${relative(process.cwd(), out) || out}: linux-${targetArch}, ${mb(out)}, Node.js ${embedded.version} (its own executable ${mb(embedded.node)}, stripped ${mb(base)}), ` +
    `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
