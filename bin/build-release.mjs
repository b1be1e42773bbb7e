#!/usr/bin/env node
// `npm run build:release`: the release artifacts in dist/release/, built offline on linux-x64:
//   gatewayd-linux-x64, gatewayd-linux-arm64   the single executable for each CPU (bin/build-binary.mjs)
//   SHA256SUMS                                 `sha256sum -c SHA256SUMS` checks both
// Then each executable is started as an operator would (version, init, migrate, an account, serve
// and its health answer): the arm64 one through qemu-aarch64-static when the machine has it
// (Debian: qemu-user-static, with libc6-arm64-cross libstdc++6-arm64-cross libatomic1-arm64-cross
// for its libraries), otherwise that check is skipped and said so. `--no-check` skips the checks.
// The release workflow (.github/workflows/release.yml) runs this on a tag and publishes the folder.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELEASE_ARCHES } from './node-runtime.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const release = join(root, 'dist', 'release');
const check = !process.argv.includes('--no-check');
const say = (msg) => process.stdout.write(`build-release: ${msg}\n`);
const ARM64_ROOT = '/usr/aarch64-linux-gnu';

rmSync(release, { recursive: true, force: true });
mkdirSync(release, { recursive: true });
const names = [];
for (const arch of RELEASE_ARCHES) {
  const name = `gatewayd-linux-${arch}`;
  execFileSync(process.execPath, [join(root, 'bin', 'build-binary.mjs'), '--arch', arch, '--out', join(release, name)], { stdio: 'inherit' });
  names.push(name);
}
const sums = names.map((name) => `${createHash('sha256').update(readFileSync(join(release, name))).digest('hex')}  ${name}\n`).join('');
writeFileSync(join(release, 'SHA256SUMS'), sums);
say(`wrote ${join('dist', 'release', 'SHA256SUMS')}:\n${sums.trimEnd()}`);

/** How to start an executable of this CPU here: directly, through qemu, or not at all. */
function launcher(arch) {
  if (arch === 'x64') return [];
  if (existsSync('/usr/bin/qemu-aarch64-static') && existsSync(join(ARM64_ROOT, 'lib', 'ld-linux-aarch64.so.1'))) {
    return ['/usr/bin/qemu-aarch64-static', '-L', ARM64_ROOT];
  }
  return undefined;
}

function run(cmd, args, input) {
  return execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000 });
}

/** version, init, migrate, an account (argon2), then serve until /api/v1/health answers 200. */
async function smoke(file, prefix) {
  const [cmd, ...pre] = prefix.length ? prefix : [file];
  const exe = prefix.length ? [...pre, file] : [];
  const version = run(cmd, [...exe, 'version']).trim();
  const dir = mkdtempSync(join(tmpdir(), 'gatewayd-release-'));
  try {
    run(cmd, [...exe, 'init', '--dir', dir]);
    const config = join(dir, 'gatewayd.toml');
    const port = 20000 + Math.floor(Math.random() * 20000);
    writeFileSync(config, readFileSync(config, 'utf8').replace('listen = "127.0.0.1:8080"', `listen = "127.0.0.1:${port}"`));
    run(cmd, [...exe, 'migrate', '--config', config]);
    run(cmd, [...exe, 'merchant', 'create', '--email', 'release@example.com', '--config', config], 'a-long-release-password\n');
    const child = spawn(cmd, [...exe, 'serve', '--config', config], { stdio: 'ignore' });
    try {
      const until = Date.now() + 90_000;
      for (;;) {
        const status = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((r) => r.status, () => 0);
        if (status === 200) break;
        if (Date.now() > until || child.exitCode !== null) throw new Error(`serve never answered /api/v1/health (last status ${status})`);
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      child.kill('SIGTERM');
    }
    return version;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (check) {
  for (const arch of RELEASE_ARCHES) {
    const prefix = launcher(arch);
    const name = `gatewayd-linux-${arch}`;
    if (prefix === undefined) {
      say(`${name}: not started (no qemu-aarch64-static with arm64 libraries in ${ARM64_ROOT} on this machine)`);
      continue;
    }
    const version = await smoke(join(release, name), prefix);
    say(`${name}: ${version}; init, migrate, an account and serve's health answer work${prefix.length ? ' (under qemu)' : ''}`);
  }
}
