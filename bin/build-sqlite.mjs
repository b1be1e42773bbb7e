#!/usr/bin/env node
// `npm run build:sqlite`: compiles better-sqlite3 (and the SQLite it bundles) from source for the
// node that runs this script, into node_modules/better-sqlite3/build/Release, which better-sqlite3
// (and bin/build-binary.mjs) then prefer to the prebuilt addon of its package.
// `npm ci` never compiles: better-sqlite3 13 carries prebuilt Node-API addons for linux (glibc and
// musl) x64/arm64, macOS and Windows. Use this on other platforms, or to build SQLite yourself.
// Needs python3, make, a C++20 compiler (g++ 10+) and this Node's headers: those of a line fetched
// by bin/node-runtime.mjs, else $npm_config_nodedir (e.g. /usr when /usr/include/node/node.h exists).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { nodePaths } from './node-runtime.mjs';

const require = createRequire(import.meta.url);
const addon = dirname(require.resolve('better-sqlite3/package.json'));
const major = process.versions.node.split('.')[0];
const fetched = major in { 22: 1, 24: 1, 26: 1 } ? nodePaths(major) : undefined;
const nodedir =
  fetched && fetched.version === process.versions.node && existsSync(join(fetched.headers, 'include/node/node.h'))
    ? fetched.headers
    : process.env.npm_config_nodedir;
if (!nodedir || !existsSync(join(nodedir, 'include/node/node_api.h'))) {
  console.error(
    `build-sqlite: no headers for Node ${process.versions.node}: set npm_config_nodedir to a folder with include/node/ (or run this with a Node from bin/node-runtime.mjs)`,
  );
  process.exit(2);
}
for (const tool of ['python3', 'make', 'g++']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.error(`build-sqlite: ${tool} is missing (Debian/Ubuntu: apt-get install python3 make g++)`);
    process.exit(2);
  }
}
// npm's own node-gyp when npm carries one (npm 7+), else the registry's through npx.
const npmRoot = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout.trim();
const bundled = [join(npmRoot, 'npm/node_modules/node-gyp/bin/node-gyp.js'), '/usr/share/nodejs/node-gyp/bin/node-gyp.js'].find((f) => existsSync(f));
const [cmd, args] = bundled ? [process.execPath, [bundled]] : ['npx', ['--yes', 'node-gyp']];
// node-gyp prefers npm_config_* settings (npm passes its own nodedir) to its command line: replace them.
const env = { ...process.env, npm_config_nodedir: nodedir, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
for (const key of Object.keys(env)) if (/^npm_config_(target|runtime|dist_url|disturl)$/i.test(key)) delete env[key];
const started = Date.now();
console.error(`build-sqlite: compiling better-sqlite3 for Node ${process.versions.node} with the headers in ${nodedir} (a few minutes on one core)`);
const r = spawnSync(cmd, [...args, 'rebuild', '--release', '--force_build=1', `--nodedir=${nodedir}`, '--jobs=max'], { cwd: addon, env, stdio: 'inherit' });
if (r.status !== 0) {
  console.error(`build-sqlite: failed (${r.status ?? r.signal})`);
  process.exit(1);
}
const check = spawnSync(
  process.execPath,
  ['-e', "const D = require('better-sqlite3'); const d = new D(':memory:'); console.log(d.prepare('SELECT sqlite_version()').pluck().get()); d.close()"],
  { encoding: 'utf8' },
);
if (check.status !== 0) {
  console.error(`build-sqlite: the compiled addon does not load:\n${check.stderr}`);
  process.exit(1);
}
console.error(
  `build-sqlite: SQLite ${check.stdout.trim()} compiled in ${((Date.now() - started) / 1000).toFixed(0)} s: ${join(addon, 'build/Release/better_sqlite3.node')}`,
);
