import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { openSqlite } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';
import { cleanEnv, GATEWAYD_BIN } from '../helpers/process.js';

const INSTALL_SH = resolve(GATEWAYD_BIN, '../../install.sh');

/**
 * A stand-in for the packaged executable: runs the built program with this node. The packaged
 * binary itself goes through install.sh in `npm run test:binary`.
 */
function fakeBinary(dir: string, tag = ''): string {
  const path = join(dir, 'gatewayd');
  writeFileSync(path, `#!/bin/sh\n# ${tag}\nexec "${process.execPath}" "${GATEWAYD_BIN}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

function install(args: string[], env: NodeJS.ProcessEnv = cleanEnv()) {
  const r = spawnSync('bash', [INSTALL_SH, ...args], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, out: r.stdout + r.stderr };
}

const mode = (p: string) => statSync(p).mode & 0o777;

test('install.sh --help prints the usage block and nothing of the script itself', () => {
  const r = spawnSync('bash', [INSTALL_SH, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^Installs or upgrades gatewayd/);
  assert.match(r.stdout, /--prefix DIR/);
  assert.doesNotMatch(r.stdout, /set -euo|^#|!\/usr\/bin/m);
  assert.equal(r.stdout.trimEnd().split('\n').at(-1)!.trim(), 'DIR/run/systemd/system exists');
});

test('install.sh --prefix: binary, 0640 config from init, 0700 data, hardened unit, migrated database; systemctl skipped without systemd', () => {
  const root = tempDir('gatewayd-root-');
  const bin = fakeBinary(tempDir('gatewayd-bin-'));
  const r = install(['--prefix', root, '--binary', bin, '--public-url', 'https://pay.example.com', '--listen', '127.0.0.1:9000']);
  assert.equal(r.status, 0, r.out);

  assert.equal(mode(join(root, 'usr/local/bin/gatewayd')), 0o755);
  const conf = join(root, 'etc/gatewayd/gatewayd.toml');
  assert.equal(mode(conf), 0o640);
  assert.equal(mode(join(root, 'etc/gatewayd')), 0o750);
  const config = parseToml(readFileSync(conf, 'utf8')) as { server: Record<string, string>; database: { path: string } };
  assert.equal(config.server.public_url, 'https://pay.example.com');
  assert.equal(config.server.listen, '127.0.0.1:9000');
  assert.equal((config as unknown as { metrics: { listen: string } }).metrics.listen, '127.0.0.1:9464', 'only server.listen changes');
  assert.ok(config.server.secret!.length >= 40, 'a fresh secret from gatewayd init');
  assert.equal(config.database.path, join(root, 'var/lib/gatewayd/gateway.db'));
  assert.equal(mode(join(root, 'var/lib/gatewayd')), 0o700);
  assert.equal(mode(join(root, 'var/lib/gatewayd/gateway.db')), 0o600);
  assert.ok(!existsSync(join(root, 'etc/gatewayd/data')), 'init did not leave a data folder beside the config');

  const unit = readFileSync(join(root, 'etc/systemd/system/gatewayd.service'), 'utf8');
  for (const line of [
    'ExecStart=/usr/local/bin/gatewayd serve --config /etc/gatewayd/gatewayd.toml',
    'User=gatewayd',
    'NoNewPrivileges=true',
    'ProtectSystem=strict',
    'ReadWritePaths=/var/lib/gatewayd',
    'PrivateTmp=true',
    'Restart=on-failure',
    'WantedBy=multi-user.target',
  ]) {
    assert.ok(unit.split('\n').includes(line), `unit has ${line}`);
  }
  assert.match(r.stdout, /systemd not found: skipping systemctl/);
  assert.match(r.stdout, /Next steps/);
  assert.match(r.stdout, /reverse proxy with HTTPS in front of 127\.0\.0\.1:9000/);
  // public_url was given: the steps do not ask for it again; they name the TRON API key.
  assert.doesNotMatch(r.stdout, /Set server\.public_url/);
  assert.match(r.stdout, /^  1\. Set tron\.api_key in /m);

  const sqlite = openSqlite(join(root, 'var/lib/gatewayd/gateway.db'), { readonly: true });
  const applied = sqlite.prepare('SELECT count(*) AS n FROM schema_migrations').get() as { n: number };
  sqlite.close();
  assert.ok(applied.n >= 1);
});

test('install.sh again upgrades the binary and keeps the configuration and the data', () => {
  const root = tempDir('gatewayd-root-');
  const binDir = tempDir('gatewayd-bin-');
  assert.equal(install(['--prefix', root, '--binary', fakeBinary(binDir, 'v1')]).status, 0);
  const conf = join(root, 'etc/gatewayd/gatewayd.toml');
  const before = readFileSync(conf, 'utf8');
  const db = join(root, 'var/lib/gatewayd/gateway.db');
  const sqlite = openSqlite(db);
  sqlite.prepare(`INSERT INTO merchants (id, email, name, created_at, updated_at) VALUES ('mch_keep', 'keep@example.test', 'Keep', 1, 1)`).run();
  sqlite.close();

  const r = install(['--prefix', root, '--binary', fakeBinary(binDir, 'v2'), '--public-url', 'https://other.example.com']);
  assert.equal(r.status, 0, r.out);
  assert.match(r.stdout, /configuration: keeping/);
  assert.match(r.stdout, /upgrade done/);
  assert.doesNotMatch(r.stdout, /Next steps/);
  assert.equal(readFileSync(conf, 'utf8'), before, 'the configuration is untouched (no new secret, no new public_url)');
  assert.match(readFileSync(join(root, 'usr/local/bin/gatewayd'), 'utf8'), /# v2/, 'the binary is replaced');
  const after = openSqlite(db, { readonly: true });
  assert.ok(after.prepare(`SELECT 1 FROM merchants WHERE id = 'mch_keep'`).get(), 'the data is kept');
  after.close();
});

test('install.sh with systemd: daemon-reload, enable and restart; an upgrade of a running service stops it before migrating', () => {
  const root = tempDir('gatewayd-root-');
  mkdirSync(join(root, 'run/systemd/system'), { recursive: true });
  const tools = tempDir('gatewayd-tools-');
  const calls = join(tools, 'calls.log');
  // A recording systemctl: "is-active" answers from a state file so the upgrade path can be driven.
  writeFileSync(
    join(tools, 'systemctl'),
    `#!/bin/sh\necho "$*" >> "${calls}"\nif [ "$1" = "is-active" ]; then [ -f "${tools}/active" ]; exit $?; fi\nexit 0\n`,
  );
  chmodSync(join(tools, 'systemctl'), 0o755);
  const env = cleanEnv({ PATH: `${tools}:${process.env.PATH}` });
  const bin = fakeBinary(tempDir('gatewayd-bin-'));

  const first = install(['--prefix', root, '--binary', bin], env);
  assert.equal(first.status, 0, first.out);
  assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), ['is-active --quiet gatewayd', 'daemon-reload', 'enable gatewayd', 'restart gatewayd']);

  writeFileSync(join(tools, 'active'), '');
  writeFileSync(calls, '');
  const upgrade = install(['--prefix', root, '--binary', bin], env);
  assert.equal(upgrade.status, 0, upgrade.out);
  assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), [
    'is-active --quiet gatewayd',
    'stop gatewayd',
    'daemon-reload',
    'enable gatewayd',
    'restart gatewayd',
  ]);
  assert.ok(upgrade.stdout.indexOf('stopping gatewayd') < upgrade.stdout.indexOf('database is up to date'), 'stopped before migrating');
});

test('install.sh refuses a bad option, a missing binary and a malformed public URL', () => {
  const root = tempDir('gatewayd-root-');
  const bad = install(['--bogus']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /unknown option --bogus/);
  const missing = install(['--prefix', root, '--binary', join(root, 'nope')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no gatewayd binary/);
  const url = install(['--prefix', root, '--binary', fakeBinary(tempDir()), '--public-url', 'pay.example.com']);
  assert.equal(url.status, 1);
  assert.match(url.stderr, /must start with https:\/\//);
  assert.ok(!existsSync(join(root, 'etc/gatewayd/gatewayd.toml')));
});

test('install.sh passes shellcheck', (t) => {
  const which = spawnSync('sh', ['-c', 'command -v shellcheck'], { encoding: 'utf8' });
  if (which.status !== 0) {
    // .ci/run installs shellcheck; a developer machine may lack it.
    t.skip('shellcheck is not installed');
    return;
  }
  const r = spawnSync('shellcheck', [INSTALL_SH], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
