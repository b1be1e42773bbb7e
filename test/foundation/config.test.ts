import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, ConfigError } from '../../src/config.js';
import { tempDir } from '../helpers/app.js';
import { cleanEnv, runCli } from '../helpers/process.js';

function withFile(text: string): { dir: string; path: string } {
  const dir = tempDir('gatewayd-config-');
  const path = join(dir, 'gatewayd.toml');
  writeFileSync(path, text);
  return { dir, path };
}

test('built-in defaults when no file is present', () => {
  const dir = tempDir();
  const c = loadConfig({ env: {}, cwd: dir });
  assert.equal(c.source, 'built-in defaults');
  assert.equal(c.server.listen, '127.0.0.1:8080');
  assert.equal(c.server.public_url, 'http://127.0.0.1:8080');
  assert.equal(c.database.path, join(dir, 'data/gateway.db'));
  assert.equal(c.tron.api_url, 'https://api.trongrid.io');
  assert.equal(c.tron.poll_interval_seconds, 5);
  assert.equal(c.invoices.max_adjustment, '0.099999');
  assert.equal(c.email.smtp_url, '');
  assert.equal(c.email.smtp_tls, 'required');
  assert.equal(c.email.from, 'gatewayd <noreply@localhost>');
  assert.equal(c.email.staff_notify, true);
  assert.deepEqual(c.google.issuers, ['https://accounts.google.com', 'accounts.google.com']);
  assert.equal(c.support.reference_prefix, 'SUP');
  assert.deepEqual(c.webhooks.allowed_ports, [443]);
  assert.equal(c.webhooks.timeout_seconds, 10);
  assert.equal(c.log.level, 'info');
  assert.deepEqual(c.rate_limits, {
    auth_per_ip: 20,
    auth_per_email: 10,
    two_factor_per_account: 5,
    public_per_ip: 10,
    chat_per_token: 30,
    api_per_key: 1200,
    invoices_per_merchant: 600,
  });
  assert.deepEqual(c.api_keys, { max_active: 20 });
  assert.deepEqual(c.auth, { require_2fa_for_staff: false });
  assert.equal(c.secretGenerated, true);
  assert.ok(c.server.secret.length >= 40);
  assert.equal(c.publicOrigin, 'http://127.0.0.1:8080');
  assert.equal(c.secureCookies, false);
  assert.ok(Object.isFrozen(c.server));
});

test('./gatewayd.toml is read when present; relative paths resolve against the file', () => {
  const { dir } = withFile('[server]\nlisten = "0.0.0.0:9000"\nsecret = "s3cret"\n[database]\npath = "db/x.db"\n');
  const c = loadConfig({ env: {}, cwd: dir });
  assert.equal(c.server.listen, '0.0.0.0:9000');
  assert.equal(c.secretGenerated, false);
  assert.equal(c.database.path, join(dir, 'db/x.db'));
});

test('--config wins over $GATEWAYD_CONFIG, which wins over ./gatewayd.toml', () => {
  const a = withFile('[server]\nlisten = "127.0.0.1:1111"\n');
  const b = withFile('[server]\nlisten = "127.0.0.1:2222"\n');
  const cwd = withFile('[server]\nlisten = "127.0.0.1:3333"\n').dir;
  assert.equal(loadConfig({ path: a.path, env: { GATEWAYD_CONFIG: b.path }, cwd }).server.listen, '127.0.0.1:1111');
  assert.equal(loadConfig({ env: { GATEWAYD_CONFIG: b.path }, cwd }).server.listen, '127.0.0.1:2222');
  assert.equal(loadConfig({ env: {}, cwd }).server.listen, '127.0.0.1:3333');
});

test('environment overrides are typed like the key', () => {
  const dir = tempDir();
  const c = loadConfig({
    cwd: dir,
    env: {
      GATEWAYD_SERVER_LISTEN: '[::1]:8081',
      GATEWAYD_SERVER_TRUST_PROXY: 'true',
      GATEWAYD_TRON_POLL_INTERVAL_SECONDS: '2.5',
      GATEWAYD_WEBHOOKS_ALLOWED_PORTS: '443,8443',
      GATEWAYD_WEBHOOKS_RESOLVE: '{"hooks.example.com":"203.0.113.7"}',
      GATEWAYD_SUPPORT_STAFF_EMAILS: 'a@example.com, b@example.com',
      GATEWAYD_RATE_LIMITS_API_PER_KEY: '0',
    },
  });
  assert.equal(c.server.listen, '[::1]:8081');
  assert.equal(c.server.trust_proxy, true);
  assert.equal(c.tron.poll_interval_seconds, 2.5);
  assert.deepEqual(c.webhooks.allowed_ports, [443, 8443]);
  assert.deepEqual(c.webhooks.resolve, { 'hooks.example.com': '203.0.113.7' });
  assert.deepEqual(c.support.staff_emails, ['a@example.com', 'b@example.com']);
  assert.equal(c.rate_limits.api_per_key, 0);
});

const refused: Array<[string, string, RegExp]> = [
  ['unknown key', '[server]\nlisten = "127.0.0.1:1"\nlistne = "x"\n', /unknown key "server\.listne"/],
  ['unknown section', '[sever]\nlisten = "x"\n', /unknown key "sever"/],
  ['wrong type', '[server]\ntrust_proxy = "yes"\n', /server\.trust_proxy: .*boolean/i],
  ['bad listen address', '[server]\nlisten = "localhost"\n', /server\.listen: expected host:port.*"localhost"/],
  ['port out of range', '[server]\nlisten = "127.0.0.1:70000"\n', /server\.listen/],
  ['bad public url', '[server]\npublic_url = "ftp://x"\n', /server\.public_url/],
  ['amount as number', '[invoices]\nmax_adjustment = 0.5\n', /invoices\.max_adjustment/],
  ['adjustment too large', '[invoices]\nmax_adjustment = "1.5"\n', /invoices\.max_adjustment/],
  ['unknown captcha provider', '[captcha]\nprovider = "recaptcha"\n', /captcha\.provider/],
  ['bad smtp url', '[email]\nsmtp_url = "http://mail"\n', /email\.smtp_url/],
  ['bad log level', '[log]\nlevel = "loud"\n', /log\.level/],
  ['invalid toml', '[server\nlisten=1', /invalid TOML/],
];

for (const [name, text, message] of refused) {
  test(`refused: ${name}, naming the file and the key`, () => {
    const { path } = withFile(text);
    assert.throws(
      () => loadConfig({ path, env: {} }),
      (err: unknown) => err instanceof ConfigError && message.test(err.message) && err.message.includes(path) && !err.message.includes('\n'),
    );
  });
}

test('refused: an unknown or mistyped GATEWAYD_ variable', () => {
  const dir = tempDir();
  assert.throws(() => loadConfig({ cwd: dir, env: { GATEWAYD_SERVER_LISTN: 'x' } }), /unknown variable GATEWAYD_SERVER_LISTN/);
  assert.throws(() => loadConfig({ cwd: dir, env: { GATEWAYD_TRON_POLL_INTERVAL_SECONDS: 'soon' } }), /GATEWAYD_TRON_POLL_INTERVAL_SECONDS: expected a number/);
  assert.throws(() => loadConfig({ cwd: dir, env: { GATEWAYD_SERVER_TRUST_PROXY: 'maybe' } }), /expected true or false/);
});

test('a missing --config file is a clear error', () => {
  assert.throws(() => loadConfig({ path: '/nonexistent/gatewayd.toml', env: {} }), /\/nonexistent\/gatewayd\.toml: cannot read/);
});

test('server.public_url is parsed and normalised once: scheme and host in lower case, no default port, no trailing slash', () => {
  for (const [given, normalised] of [
    ['HTTPS://Pay.Example.COM', 'https://pay.example.com'],
    ['https://pay.example.com:443/', 'https://pay.example.com'],
    ['Http://127.0.0.1:8080//', 'http://127.0.0.1:8080'],
    ['https://example.com/pay/', 'https://example.com/pay'],
  ] as const) {
    const c = loadConfig({ path: withFile(`[server]\npublic_url = "${given}"\n`).path, env: {} });
    assert.equal(c.server.public_url, normalised, given);
    assert.equal(c.secureCookies, normalised.startsWith('https:'), given);
    assert.equal(c.publicOrigin, new URL(normalised).origin);
  }
  const env = loadConfig({ cwd: tempDir(), env: { GATEWAYD_SERVER_PUBLIC_URL: 'HTTPS://PAY.EXAMPLE.COM/' } });
  assert.equal(env.server.public_url, 'https://pay.example.com');
  assert.equal(env.secureCookies, true);
  for (const bad of ['https://user:pw@pay.example.com', 'https://pay.example.com/?x=1', 'https://pay.example.com/#top', 'pay.example.com']) {
    assert.throws(() => loadConfig({ path: withFile(`[server]\npublic_url = "${bad}"\n`).path, env: {} }), /server\.public_url: expected/, bad);
  }
});

test('server.public_url follows server.listen when it is not set; console.explorer_tx_url follows the network', () => {
  const moved = loadConfig({ cwd: tempDir(), env: { GATEWAYD_SERVER_LISTEN: '127.0.0.1:9090' } });
  assert.equal(moved.server.public_url, 'http://127.0.0.1:9090');
  assert.equal(moved.publicOrigin, 'http://127.0.0.1:9090');
  assert.equal(moved.publicUrlFollowsListen, true);
  const wildcard = loadConfig({ path: withFile('[server]\nlisten = "0.0.0.0:8181"\n').path, env: {} });
  assert.equal(wildcard.server.public_url, 'http://127.0.0.1:8181');
  const set = loadConfig({ cwd: tempDir(), env: { GATEWAYD_SERVER_LISTEN: '127.0.0.1:9090', GATEWAYD_SERVER_PUBLIC_URL: 'https://pay.example.com' } });
  assert.equal(set.server.public_url, 'https://pay.example.com');
  assert.equal(set.publicUrlFollowsListen, false);

  const explorer = (network: string, extra = '') =>
    loadConfig({ path: withFile(`[tron]\nnetwork = "${network}"\napi_url = "http://127.0.0.1:1"\n${extra}`).path, env: {} }).console.explorer_tx_url;
  assert.equal(explorer('mainnet'), 'https://tronscan.org/#/transaction/{tx}');
  assert.equal(explorer('nile'), 'https://nile.tronscan.org/#/transaction/{tx}');
  assert.equal(explorer('devnet'), '', 'the simulated chain is on no public explorer');
  assert.equal(explorer('devnet', '[console]\nexplorer_tx_url = "https://local.example/tx/{tx}"\n'), 'https://local.example/tx/{tx}');
});

test('a configuration error names the key but never echoes a secret or a URL that may carry one', () => {
  const secrets: Array<[string, RegExp]> = [
    ['[server]\nsecret = 9876543210987\n', /server\.secret: .*value not shown/],
    ['[tron]\napi_key = ["tron-S3cret-key"]\n', /tron\.api_key: .*value not shown/],
    ['[captcha]\nsecret_key = 1234.5678\n', /captcha\.secret_key: .*value not shown/],
    ['[email]\nsmtp_url = "smtpx://mailer:Pa55-S3cret@mail.example.com"\n', /email\.smtp_url: .*value not shown/],
    ['[server]\npublic_url = "ftp://ops:Pa55-S3cret@pay.example.com"\n', /server\.public_url: .*value not shown/],
    ['[server]\nsecret = "unterminated-S3cret\n', /invalid TOML at line 2: /],
  ];
  for (const [text, message] of secrets) {
    const { path } = withFile(text);
    assert.throws(
      () => loadConfig({ path, env: {} }),
      (err: unknown) => err instanceof ConfigError && message.test(err.message) && !/S3cret|9876543210987|1234\.5678/.test(err.message),
      text,
    );
  }
  const dir = tempDir();
  assert.throws(
    () => loadConfig({ cwd: dir, env: { GATEWAYD_EMAIL_SMTP_URL: 'http://mailer:Pa55-S3cret@mail' } }),
    (err: unknown) => err instanceof ConfigError && /email\.smtp_url/.test(err.message) && !err.message.includes('S3cret'),
  );
  // Values that are not secret are still quoted, to help.
  assert.throws(
    () => loadConfig({ cwd: dir, env: { GATEWAYD_RATE_LIMITS_API_PER_KEY: 'lots' } }),
    /GATEWAYD_RATE_LIMITS_API_PER_KEY: expected a number \(got "lots"\)/,
  );
});

test('gatewayd serve with an invalid secret prints one line on stderr naming the key, without the value', () => {
  const dir = tempDir();
  const config = join(dir, 'gatewayd.toml');
  writeFileSync(config, '[server]\nsecret = 314159265358979\n[email]\nsmtp_url = "smtp//mailer:Pa55-S3cret@mail.example.com"\n', { mode: 0o600 });
  for (const args of [
    ['serve', '--config', config],
    ['migrate', '--config', config],
    ['doctor', '--config', config],
  ]) {
    const r = runCli(args, { env: { ...cleanEnv(), GATEWAYD_TRON_API_KEY: 'env-S3cret' } });
    const output = r.stdout + r.stderr;
    assert.notEqual(r.status, 0, args[0]);
    assert.match(output, /server\.secret/, args[0]);
    assert.doesNotMatch(output, /314159265358979|S3cret/, args[0]);
  }
});
