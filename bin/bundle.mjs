#!/usr/bin/env node
// `npm run build` (after tsc): dist/bundle/, the program bin/gatewayd runs. esbuild bundles
// src/main.ts and its dependencies into a few ES modules: main.js, the chunks start-up loads, and
// one chunk per dynamic import (each command, pg, nodemailer, qrcode, prom-client ...), still
// loaded only when used. dist/src/ (tsc) stays as it is: the tests import it.
// Why (issue 32, footprint): run from dist/src/, `serve` loads about 800 modules, and V8 keeps each
// one's source (often two-byte: one non-Latin-1 character in a comment doubles a file) and a module
// record; from these chunks (minified whitespace and syntax, ASCII) an idle `serve` holds 13 MB
// less (93 to 80 MB) and starts with half the CPU time. Identifiers keep their names, so stack
// traces and `constructor.name` read as in the source; source maps sit beside each chunk
// (`node --enable-source-maps` maps a trace back to src/).
// Also used by bin/build-binary.mjs: the shared settings (ESBUILD_COMMON, zodEnglishOnly).
import { rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** What both bundles share: minified whitespace and syntax, no identifier renaming, ASCII output. */
export const ESBUILD_COMMON = {
  bundle: true,
  platform: 'node',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

/**
 * zod's namespace (`z`, which our code imports whole) re-exports every one of its ~50 error-message
 * locales; esbuild cannot drop what a namespace object exposes, so all of them were loaded at start
 * (290 KB of source, ~1 MB of memory). gatewayd words its own errors and uses zod's English
 * defaults only: `z.locales` keeps `en` alone.
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core|mini)$/.test(args.resolveDir) ? { path: 'zod-locales', namespace: 'gw-zod' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'gw-zod' }, () => ({
      contents: "export { default as en } from 'zod/v4/locales/en.js';",
      resolveDir: root,
      loader: 'js',
    }));
  },
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const esbuild = require('esbuild');
  const { NODE_LINES } = await import('./node-runtime.mjs');
  const outdir = join(root, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  const started = Date.now();
  const result = await esbuild.build({
    ...ESBUILD_COMMON,
    entryPoints: { main: join(root, 'src', 'main.ts') },
    format: 'esm',
    splitting: true,
    outdir,
    target: `node${Math.min(...Object.keys(NODE_LINES).map(Number))}`,
    // The addons' packages load their .node files by path: they stay in node_modules.
    external: ['better-sqlite3', '@node-rs/argon2'],
    plugins: [zodEnglishOnly],
    sourcemap: 'linked',
    sourcesContent: false,
    banner: { js: "import { createRequire as __gatewaydRequire } from 'node:module'; const require = __gatewaydRequire(import.meta.url);" },
  });
  const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
  const bytes = outputs.reduce((sum, f) => sum + statSync(resolve(f)).size, 0);
  process.stdout.write(
    `bundle: dist/bundle/ ${(bytes / 1e6).toFixed(1)} MB in ${outputs.length} files from ${Object.keys(result.metafile.inputs).length} modules, ${Date.now() - started} ms\n`,
  );
}
