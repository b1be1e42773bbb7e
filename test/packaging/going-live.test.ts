/**
 * Going live without a developer (issue 43): `gatewayd init --domain` writes the configuration, the
 * systemd unit and the Caddy site from flags or answers; `gatewayd doctor` checks the two files
 * against the configuration, with the fix; install.sh installs a release download only when its
 * SHA-256 is the one SHA256SUMS lists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { loadConfig } from '../../src/config.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { tempDir } from '../helpers/app.js';
import { cleanEnv, GATEWAYD_BIN, runCli } from '../helpers/process.js';

const INSTALL_SH = resolve(GATEWAYD_BIN, '../../install.sh');
const ARCH = process.arch === 'arm64' ? 'arm64' : 'x64';

interface Toml {
  server: { public_url: string; trust_proxy: boolean; listen: string };
  database: { path: string };
  tron: { api_key: string };
  email: { smtp_url: string; from: string };
}

async function doctorLines(file: string, dir: string): Promise<string[]> {
  const lines: string[] = [];
  await runDoctor(
    () => loadConfig({ path: file, env: {} }),
    (l) => lines.push(l),
    {
      timeoutMs: 200,
      deployPaths: { caddy: [join(dir, 'Caddyfile')], unit: [join(dir, 'gatewayd.service')] },
    },
  );
  return lines.filter((l) => / (caddy|systemd) /.test(l));
}

test('init --domain writes the configuration, the unit and the Caddy site from flags; doctor checks both files with the fix', async () => {
  const dir = tempDir('gatewayd-live-');
  const r = runCli([
    'init',
    '--dir',
    dir,
    '--domain',
    'Pay.Example.com',
    '--listen',
    '127.0.0.1:9100',
    '--smtp-url',
    'smtps://shop:secret@smtp.example.com:465',
    '--email-from',
    'Shop payments <pay@example.com>',
    '--tron-api-key',
    'a1b2c3',
  ]);
  assert.equal(r.status, 0, r.stderr);
  const file = join(dir, 'gatewayd.toml');
  const config = parseToml(readFileSync(file, 'utf8')) as unknown as Toml;
  assert.equal(config.server.public_url, 'https://pay.example.com');
  assert.equal(config.server.trust_proxy, true, 'behind the proxy init wrote, the client address comes from X-Forwarded-For');
  assert.equal(config.server.listen, '127.0.0.1:9100');
  assert.equal(config.tron.api_key, 'a1b2c3');
  assert.equal(config.email.smtp_url, 'smtps://shop:secret@smtp.example.com:465');
  assert.equal(config.email.from, 'Shop payments <pay@example.com>');
  const site = readFileSync(join(dir, 'Caddyfile'), 'utf8');
  assert.match(site, /^pay\.example\.com \{\n\tencode zstd gzip\n\treverse_proxy 127\.0\.0\.1:9100\n\}$/m);
  const unit = readFileSync(join(dir, 'gatewayd.service'), 'utf8').split('\n');
  assert.ok(unit.includes(`ExecStart=${GATEWAYD_BIN} serve --config ${file}`), unit.join('\n'));
  assert.ok(unit.includes(`ReadWritePaths=${join(dir, 'data')}`));
  assert.match(r.stdout, /systemctl enable --now gatewayd/);
  assert.match(r.stdout, /cp .*Caddyfile \/etc\/caddy\/Caddyfile/);

  assert.deepEqual(
    (await doctorLines(file, dir)).map((l) => l.split(/\s+/).slice(0, 2).join(' ')),
    ['ok caddy', 'ok systemd'],
  );

  // An operator edits the proxy to another port, and points the unit at another configuration.
  writeFileSync(join(dir, 'Caddyfile'), site.replace('reverse_proxy 127.0.0.1:9100', 'reverse_proxy 127.0.0.1:8080'));
  writeFileSync(join(dir, 'gatewayd.service'), unit.join('\n').replace(`--config ${file}`, '--config /etc/gatewayd/other.toml'));
  const broken = await doctorLines(file, dir);
  assert.match(
    broken[0]!,
    /^FAIL\s+caddy .* forwards pay\.example\.com to 127\.0\.0\.1:8080, but gatewayd listens on 127\.0\.0\.1:9100: write "reverse_proxy 127\.0\.0\.1:9100"/,
  );
  assert.match(broken[1]!, /^FAIL\s+systemd .* not this configuration .*: set ExecStart=.* serve --config /);

  writeFileSync(join(dir, 'Caddyfile'), 'shop.example.org {\n\treverse_proxy 127.0.0.1:9100\n}\n');
  assert.match((await doctorLines(file, dir))[0]!, /^FAIL\s+caddy .* serves shop\.example\.org, not pay\.example\.com .*"pay\.example\.com \{"/);
});

test('init asks for what its flags left out (--ask, or on a terminal); an empty answer keeps the default', () => {
  const dir = tempDir('gatewayd-ask-');
  const r = runCli(['init', '--dir', dir, '--ask', '--tron-api-key', 'from-flag'], { input: 'shop.example.org\n\nShop <pay@shop.example.org>\n' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Public domain/);
  assert.match(r.stderr, /SMTP URL/);
  assert.doesNotMatch(r.stderr, /TronGrid API key/, 'a flag given is not asked again');
  const config = parseToml(readFileSync(join(dir, 'gatewayd.toml'), 'utf8')) as unknown as Toml;
  assert.equal(config.server.public_url, 'https://shop.example.org');
  assert.equal(config.email.smtp_url, '', 'left empty: no mail');
  assert.equal(config.email.from, 'Shop <pay@shop.example.org>');
  assert.equal(config.tron.api_key, 'from-flag');
  assert.ok(existsSync(join(dir, 'Caddyfile')));
});

test('init refuses a malformed domain, listen or SMTP URL with exit 2 and writes nothing', () => {
  for (const args of [
    ['--domain', 'https://pay.example.com'],
    ['--domain', 'pay example.com'],
    ['--listen', '8080'],
    ['--smtp-url', 'mail.example.com'],
    ['--domain', 'pay.example.com', '--public-url', 'https://pay.example.com'],
    ['--email-from', 'a"b'],
  ]) {
    const dir = tempDir('gatewayd-bad-');
    const r = runCli(['init', '--dir', dir, ...args], { input: '' });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(!existsSync(join(dir, 'gatewayd.toml')), `${args.join(' ')} wrote nothing`);
  }
});

/** A release folder on loopback: gatewayd-linux-<arch> (a stand-in that runs the built program) and SHA256SUMS. */
async function releaseServer(tamper: boolean) {
  const exe = `#!/bin/sh\n# release stand-in\nexec "${process.execPath}" "${GATEWAYD_BIN}" "$@"\n`;
  const sum = createHash('sha256').update(exe).digest('hex');
  const files: Record<string, string> = {
    [`gatewayd-linux-${ARCH}`]: tamper ? exe.replace('stand-in', 'tampered') : exe,
    SHA256SUMS: `${sum}  gatewayd-linux-${ARCH}\n${'0'.repeat(64)}  gatewayd-linux-other\n`,
  };
  const server = createServer((req, res) => {
    const name = req.url!.replace(/^\/v1\.0\.0\//, '');
    if (name in files) res.writeHead(200).end(files[name]);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1.0.0`, close: () => new Promise((r) => server.close(r)) };
}

function install(args: string[]) {
  const r = spawnSync('bash', [INSTALL_SH, ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, out: r.stdout + r.stderr };
}

/** install.sh without blocking this process, whose loopback server it downloads from. */
function installAsync(args: string[]): Promise<ReturnType<typeof install>> {
  return new Promise((done) => {
    execFile('bash', [INSTALL_SH, ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      done({ status, stdout, stderr, out: stdout + stderr });
    });
  });
}

test('install.sh --download installs a release whose SHA-256 SHA256SUMS lists, with --domain its Caddy site; a tampered download installs nothing', async () => {
  const good = await releaseServer(false);
  try {
    const root = tempDir('gatewayd-root-');
    const r = await installAsync(['--prefix', root, '--download', good.url, '--domain', 'pay.example.com', '--tron-api-key', 'k1']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.stdout, new RegExp(`checksum: gatewayd-linux-${ARCH} matches`));
    assert.match(readFileSync(join(root, 'usr/local/bin/gatewayd'), 'utf8'), /release stand-in/);
    const config = parseToml(readFileSync(join(root, 'etc/gatewayd/gatewayd.toml'), 'utf8')) as unknown as Toml;
    assert.equal(config.server.public_url, 'https://pay.example.com');
    assert.equal(config.server.trust_proxy, true);
    assert.equal(config.tron.api_key, 'k1');
    assert.equal(config.database.path, join(root, 'var/lib/gatewayd/gateway.db'));
    assert.match(readFileSync(join(root, 'etc/gatewayd/Caddyfile'), 'utf8'), /^pay\.example\.com \{/m);
    const unit = readFileSync(join(root, 'etc/systemd/system/gatewayd.service'), 'utf8').split('\n');
    assert.ok(unit.includes('ExecStart=/usr/local/bin/gatewayd serve --config /etc/gatewayd/gatewayd.toml'));
    assert.ok(unit.includes('ReadWritePaths=/var/lib/gatewayd'));
  } finally {
    await good.close();
  }
  const bad = await releaseServer(true);
  try {
    const root = tempDir('gatewayd-root-');
    const r = await installAsync(['--prefix', root, '--download', bad.url]);
    assert.equal(r.status, 1, r.out);
    assert.match(r.stderr, /SHA-256 [0-9a-f]{64} is not the [0-9a-f]{64} that .*SHA256SUMS lists .*nothing was installed/);
    assert.ok(!existsSync(join(root, 'usr/local/bin/gatewayd')), 'no binary installed');
    assert.ok(!existsSync(join(root, 'etc/gatewayd/gatewayd.toml')), 'no configuration written');
  } finally {
    await bad.close();
  }
});

test('install.sh --binary checks a SHA256SUMS given with --sums, or found beside the binary; one source at a time', () => {
  const dir = tempDir('gatewayd-bin-');
  const bin = join(dir, 'gatewayd');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${GATEWAYD_BIN}" "$@"\n`);
  chmodSync(bin, 0o755);
  writeFileSync(join(dir, 'SHA256SUMS'), `${'1'.repeat(64)}  gatewayd\n`);
  const root = tempDir('gatewayd-root-');
  const beside = install(['--prefix', root, '--binary', bin]);
  assert.equal(beside.status, 1, beside.out);
  assert.match(beside.stderr, /gatewayd: SHA-256 .* is not the 1{64}/);
  const other = join(tempDir('gatewayd-sums-'), 'SHA256SUMS');
  writeFileSync(other, `${createHash('sha256').update(readFileSync(bin)).digest('hex')}  gatewayd\n`);
  const ok = install(['--prefix', root, '--binary', bin, '--sums', other]);
  assert.equal(ok.status, 0, ok.out);
  assert.match(ok.stdout, /checksum: gatewayd matches/);
  const both = install(['--prefix', root, '--binary', bin, '--download', 'http://127.0.0.1:1/']);
  assert.equal(both.status, 1);
  assert.match(both.stderr, /give one of --download, --binary and --from-source/);
});
