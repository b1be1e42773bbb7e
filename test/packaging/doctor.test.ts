import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, closeSync, existsSync, openSync, writeSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../src/config.js';
import { openSqlite } from '../../src/db/database.js';
import { checkConfig, runDoctor } from '../../src/cli/doctor.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { NETWORKS, type NetworkName } from '../../src/lib/tron.js';
import { tempDir } from '../helpers/app.js';
import { freePort, runCli } from '../helpers/process.js';
import { makeTestCa, type TestCa } from '../helpers/test-ca.js';
import { nonLoopbackAddress } from '../helpers/smtp.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';
import { withClient } from '../../src/db/postgres.js';

interface TronStandIn {
  url: string;
  requests: IncomingHttpHeaders[];
  /** What the next answers look like; `network`: which chain it serves (genesis block, USDT contract). */
  mode: { status: number; dateOffsetMs: number; blockAgeMs: number; network: NetworkName };
  close(): Promise<void>;
}

/**
 * A loopback stand-in for TronGrid's /walletsolidity/getnowblock, and for the two calls that tell
 * networks apart: /wallet/getblockbynum 0 (the genesis block) and /wallet/getcontract.
 */
async function tronStandIn(): Promise<TronStandIn> {
  const requests: IncomingHttpHeaders[] = [];
  const mode: TronStandIn['mode'] = { status: 200, dateOffsetMs: 0, blockAgeMs: 57_000, network: 'mainnet' };
  const server: Server = createServer(async (req, res) => {
    requests.push(req.headers);
    res.sendDate = false;
    const date = new Date(Date.now() + mode.dateOffsetMs).toUTCString();
    const network = NETWORKS[mode.network];
    if (req.url === '/wallet/getblockbynum' || req.url === '/wallet/getcontract') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const asked = JSON.parse(body) as { num?: number; value?: string };
      const answer =
        req.url === '/wallet/getblockbynum'
          ? asked.num === 0
            ? { blockID: network.genesisBlockId, block_header: { raw_data: { txTrieRoot: '0'.repeat(64), parentHash: '0'.repeat(64) } } }
            : {}
          : asked.value === network.usdtContract
            ? { origin_address: 'THPvaUhoh2Qn2y9THCZML3H815hhFhn5YC', contract_address: network.usdtContract, name: 'TetherToken', bytecode: '6080' }
            : {};
      res.writeHead(200, { date, 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    if (req.url !== '/walletsolidity/getnowblock') {
      res.writeHead(404, { date }).end();
      return;
    }
    if (mode.status !== 200) {
      res.writeHead(mode.status, { date, 'content-type': 'application/json' }).end('{"Error":"ApiKey not exists"}');
      return;
    }
    const block = { blockID: '00', block_header: { raw_data: { number: 69316581, timestamp: Date.now() - mode.blockAgeMs } } };
    res.writeHead(200, { date, 'content-type': 'application/json' }).end(JSON.stringify(block));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    mode,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * An SMTP server that checks one username and password. With `starttls` it offers STARTTLS with a
 * certificate from a test CA that this process trusts (as an operator's NODE_EXTRA_CA_CERTS would);
 * without, it accepts AUTH in plain text, as a relay (or a man in the middle) that does not offer it.
 */
async function smtpStandIn(options: { starttls?: boolean; host?: string } = {}): Promise<{ port: number; logins: string[]; close(): Promise<void> }> {
  const logins: string[] = [];
  const tlsOptions = options.starttls ? await trustedCertificate() : {};
  const server = new SMTPServer({
    disabledCommands: options.starttls ? [] : ['STARTTLS'],
    ...tlsOptions,
    allowInsecureAuth: true,
    onAuth(auth, session, cb) {
      logins.push(`${auth.username ?? ''}${session.secure ? ' over TLS' : ''}`);
      if (auth.username === 'ops' && auth.password === 'smtp-pass-S3cret') cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
  });
  await new Promise<void>((r) => server.listen(0, options.host ?? '127.0.0.1', () => r()));
  return {
    port: (server.server.address() as AddressInfo).port,
    logins,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let trustedCa: Promise<TestCa> | undefined;
async function trustedCertificate(): Promise<{ key: string; cert: string }> {
  trustedCa ??= makeTestCa().then((ca) => {
    setDefaultCACertificates([...getCACertificates('default'), ca.pem]);
    return ca;
  });
  return (await trustedCa).issue({ ip: ['127.0.0.1'] });
}

/** An installation laid out as install.sh does: config 0640, data folder 0700, database 0600. */
function installation(settings: string): { dir: string; config: string; db: string } {
  const dir = tempDir('gatewayd-doctor-');
  const data = join(dir, 'data');
  const db = join(data, 'gateway.db');
  const config = join(dir, 'gatewayd.toml');
  writeFileSync(config, `${settings}\n[database]\npath = "${db}"\n`, { mode: 0o640 });
  chmodSync(config, 0o640);
  const r = runCli(['migrate', '--config', config]);
  assert.equal(r.status, 0, r.stderr);
  chmodSync(data, 0o700);
  return { dir, config, db };
}

async function doctor(config: string): Promise<{ code: number; lines: string[]; text: string }> {
  const lines: string[] = [];
  const code = await runDoctor(
    () => loadConfig({ path: config, env: {} }),
    (l) => lines.push(l),
    { timeoutMs: 2000 },
  );
  return { code, lines, text: lines.join('\n') };
}

const line = (lines: string[], level: string, check: string) => lines.find((l) => l.startsWith(level) && l.slice(6).startsWith(check));

test('doctor: a healthy installation passes every check and never prints a secret', async (t) => {
  const tron = await tronStandIn();
  const smtp = await smtpStandIn({ starttls: true });
  t.after(async () => {
    await tron.close();
    await smtp.close();
  });
  const { config, db } = installation(`[server]
public_url = "https://pay.example.com"
trust_proxy = true
secret = "0123456789abcdef0123456789abcdef-long-enough"
[tron]
api_url = "${tron.url}"
api_key = "tron-key-S3cret"
[email]
smtp_url = "smtp://ops:smtp-pass-S3cret@127.0.0.1:${smtp.port}"
[support]
staff_emails = ["ops@pay.example.com"]`);
  const r = await doctor(config);
  assert.equal(r.code, 0, r.text);
  assert.doesNotMatch(r.text, /^(WARN|FAIL)/m, r.text);
  for (const check of [
    'config',
    'secret',
    'public_url',
    'permissions',
    'database',
    'migrations',
    'network',
    'runtime',
    'tron',
    'tron key',
    'chain',
    'usdt',
    'clock',
    'smtp',
  ]) {
    assert.ok(line(r.lines, 'ok', check), `ok ${check}\n${r.text}`);
  }
  assert.match(r.text, /solidified block 69316581/);
  assert.match(r.text, /serves tron-mainnet \(genesis block 2b6653dc\)/);
  assert.match(r.text, /TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t is a contract on tron-mainnet/);
  assert.match(r.text, /network +tron-mainnet, as the database records/);
  assert.match(r.text, /integrity ok, journal wal/);
  assert.equal(tron.requests[0]!['tron-pro-api-key'], 'tron-key-S3cret');
  assert.deepEqual(smtp.logins, ['ops over TLS']);
  // A loopback relay is exempt from smtp_tls = "required"; STARTTLS is still used when offered (above).
  assert.match(line(r.lines, 'ok', 'smtp') ?? '', /accepts the credentials; loopback host: exempt from email\.smtp_tls = "required"/);
  assert.doesNotMatch(r.text, /S3cret|0123456789abcdef/);
  assert.match(r.lines.at(-1)!, /^no problems found/);
  // Nothing is left behind that the service user could not open (doctor often runs as root).
  assert.ok(!existsSync(`${db}-wal`) && !existsSync(`${db}-shm`), 'no -wal/-shm left beside a stopped database');
});

test('doctor: names each problem and exits 1', async (t) => {
  const tron = await tronStandIn();
  t.after(() => tron.close());
  const closedPort = await freePort();
  const { config, db, dir } = installation(`[server]
public_url = "http://pay.example.com"
[tron]
api_url = "${tron.url}"
api_key = "wrong-key"
[email]
smtp_url = "smtp://127.0.0.1:${closedPort}"`);
  chmodSync(config, 0o644);
  chmodSync(join(dir, 'data'), 0o755);
  chmodSync(db, 0o644);
  const sqlite = openSqlite(db);
  sqlite.prepare('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)').run();
  sqlite.close();
  tron.mode.status = 401;
  tron.mode.dateOffsetMs = -10 * 60_000;

  const r = await doctor(config);
  assert.equal(r.code, 1, r.text);
  assert.match(line(r.lines, 'FAIL', 'secret') ?? '', /server\.secret is empty/);
  assert.match(line(r.lines, 'WARN', 'public_url') ?? '', /plain http/);
  assert.match(r.text, /FAIL  permissions +\S+gatewayd\.toml is 0644/);
  assert.match(r.text, /FAIL  permissions +\S+data is 0755/);
  assert.match(r.text, /FAIL  permissions +\S+gateway\.db is 0644/);
  assert.match(line(r.lines, 'FAIL', 'migrations') ?? '', /1 pending .*gatewayd migrate/);
  assert.match(line(r.lines, 'FAIL', 'tron') ?? '', /answered 401: tron\.api_key is rejected/);
  assert.match(line(r.lines, 'FAIL', 'clock') ?? '', /60[01] s ahead of the TRON API's clock/);
  assert.match(line(r.lines, 'FAIL', 'smtp') ?? '', /ECONNREFUSED|ECONNECTION/);
  assert.match(r.lines.at(-1)!, /^\d+ problem\(s\) found/);
  if (process.getuid?.() === 0) {
    // A database file created by root in the service user's folder.
    chownSync(join(dir, 'data'), 65534, 65534);
    const owned = await doctor(config);
    assert.match(owned.text, /FAIL  permissions +\S+gateway\.db is owned by uid 0, its folder by uid 65534/);
    chownSync(join(dir, 'data'), 0, 0);
  }

  // A small skew is only a warning; a stale solidified block too.
  tron.mode.status = 200;
  tron.mode.dateOffsetMs = -20_000;
  tron.mode.blockAgeMs = 30 * 60_000;
  const r2 = await doctor(config);
  assert.match(line(r2.lines, 'WARN', 'clock') ?? '', /2[01] s ahead/);
  assert.match(r2.text, /WARN  tron +the solidified block is \d+ s old/);
});

test('doctor warns when nobody answers support and when an https public_url does not trust the proxy', () => {
  const env = { GATEWAYD_SERVER_PUBLIC_URL: 'https://pay.example.com', GATEWAYD_SERVER_SECRET: 'x'.repeat(40) };
  const findings = checkConfig(loadConfig({ env, cwd: mkdtempSync(join(tmpdir(), 'gatewayd-doctor-')) }));
  assert.match(findings.find((f) => f.check === 'support')?.detail ?? '', /staff_emails is empty.*contact form and chat are off/);
  assert.equal(findings.find((f) => f.check === 'support')?.level, 'warn');
  assert.match(findings.find((f) => f.check === 'trust_proxy')?.detail ?? '', /trust_proxy = false/);
});

test('doctor warns when an http server.public_url names another port than server.listen, not when it follows listen', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'gatewayd-doctor-'));
  const secret = 'x'.repeat(40);
  const apart = checkConfig(
    loadConfig({ cwd, env: { GATEWAYD_SERVER_LISTEN: '127.0.0.1:9090', GATEWAYD_SERVER_PUBLIC_URL: 'http://127.0.0.1:8080', GATEWAYD_SERVER_SECRET: secret } }),
  );
  const warning = apart.find((f) => f.check === 'public_url' && f.level === 'warn');
  assert.match(warning?.detail ?? '', /server\.public_url http:\/\/127\.0\.0\.1:8080 names port 8080 but server\.listen is 127\.0\.0\.1:9090/);
  const following = checkConfig(loadConfig({ cwd, env: { GATEWAYD_SERVER_LISTEN: '127.0.0.1:9090', GATEWAYD_SERVER_SECRET: secret } }));
  assert.deepEqual(
    following.filter((f) => f.check === 'public_url').map((f) => [f.level, f.detail]),
    [['ok', 'http://127.0.0.1:9090 (http on loopback: local use only)']],
  );
});

const NETWORK_HOST = nonLoopbackAddress();

test(
  'doctor: an SMTP server on the network that does not offer STARTTLS is a problem by default, a warning when opted out, and never gets the password',
  { skip: NETWORK_HOST === undefined && 'no non-loopback address' },
  async (t) => {
    const tron = await tronStandIn();
    const smtp = await smtpStandIn({ host: NETWORK_HOST });
    t.after(async () => {
      await tron.close();
      await smtp.close();
    });
    const settings = (extra: string) => `[server]
public_url = "https://pay.example.com"
secret = "0123456789abcdef0123456789abcdef-long-enough"
[tron]
api_url = "${tron.url}"
[email]
smtp_url = "smtp://ops:smtp-pass-S3cret@${NETWORK_HOST}:${smtp.port}"
${extra}`;
    const required = await doctor(installation(settings('')).config);
    assert.equal(required.code, 1, required.text);
    assert.match(
      line(required.lines, 'FAIL', 'smtp') ?? '',
      /STARTTLS is required: use smtps:\/\/, enable STARTTLS on the server, or for a relay on this machine set email\.smtp_tls = "opportunistic"/,
    );
    assert.deepEqual(smtp.logins, [], 'the password was never presented without TLS');

    const optedOut = await doctor(installation(settings('smtp_tls = "opportunistic"')).config);
    assert.equal(optedOut.code, 0, optedOut.text);
    assert.match(
      line(optedOut.lines, 'WARN', 'smtp') ?? '',
      /STARTTLS only when offered: email\.smtp_tls = "opportunistic" lets anyone on the path strip STARTTLS and read reset links and the SMTP password; keep it for a relay on this machine \(\S+ is not loopback\)$/,
    );
    assert.deepEqual(smtp.logins, ['ops'], 'opted out: the credentials go in plain text, as the warning says');
    assert.doesNotMatch(required.text + optedOut.text, /S3cret/);
  },
);

test('doctor: a relay on loopback is exempt from smtp_tls = "required", and doctor says so', async (t) => {
  const tron = await tronStandIn();
  const smtp = await smtpStandIn();
  t.after(async () => {
    await tron.close();
    await smtp.close();
  });
  const config = installation(`[server]
public_url = "https://pay.example.com"
secret = "0123456789abcdef0123456789abcdef-long-enough"
[tron]
api_url = "${tron.url}"
[email]
smtp_url = "smtp://ops:smtp-pass-S3cret@127.0.0.1:${smtp.port}"
`).config;
  const local = await doctor(config);
  assert.equal(local.code, 0, local.text);
  assert.match(line(local.lines, 'ok', 'smtp') ?? '', /loopback host: exempt from email\.smtp_tls = "required" \(no network path to strip STARTTLS from\)/);
  assert.deepEqual(smtp.logins, ['ops']);
});

test('doctor: a damaged database, a missing one, and a configuration error are problems, not crashes', async () => {
  const { config, db } = installation(`[server]\nsecret = "0123456789abcdef0123456789abcdef"\n[tron]\napi_url = "http://127.0.0.1:${await freePort()}"`);
  // Overwrite the middle of the file: page headers and cells become garbage.
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(4096 * 3, 0x5a), 0, 4096 * 3, 4096 * 2);
  closeSync(fd);
  const damaged = await doctor(config);
  assert.equal(damaged.code, 1);
  assert.match(line(damaged.lines, 'FAIL', 'database') ?? '', /restore the latest backup/);
  assert.match(line(damaged.lines, 'FAIL', 'tron') ?? '', /unreachable \(ECONNREFUSED\)/);

  const missing = installation('[server]\nsecret = "0123456789abcdef0123456789abcdef"');
  const moved = join(missing.dir, 'elsewhere.toml');
  writeFileSync(moved, `[server]\nsecret = "0123456789abcdef0123456789abcdef"\n[database]\npath = "${join(missing.dir, 'none', 'x.db')}"\n`, { mode: 0o600 });
  const r = await doctor(moved);
  assert.match(line(r.lines, 'FAIL', 'database') ?? '', /does not exist: run `gatewayd migrate`/);

  writeFileSync(moved, '[server]\nlisten = "nowhere"\n', { mode: 0o600 });
  const bad = await doctor(moved);
  assert.equal(bad.code, 1);
  assert.match(bad.lines[0]!, /^FAIL  config +.*server\.listen/);
});

test('doctor names a TRON provider by its scheme and host: an access token in the path is never printed', async (t) => {
  const tron = await tronStandIn();
  t.after(() => tron.close());
  const dir = tempDir('gatewayd-doctor-');
  const config = join(dir, 'gatewayd.toml');
  const closed = await freePort();
  const write = (url: string) => writeFileSync(config, `[tron]\napi_url = "${url}"\n[database]\npath = "${join(dir, 'gateway.db')}"\n`, { mode: 0o600 });
  write(`${tron.url}/S3cretAccessToken`);
  const refused = await doctor(config);
  assert.match(line(refused.lines, 'FAIL', 'tron') ?? '', new RegExp(`^FAIL  tron +${tron.url} answered HTTP 404$`));
  write(`http://127.0.0.1:${closed}/S3cretAccessToken/`);
  const unreachable = await doctor(config);
  assert.match(line(unreachable.lines, 'FAIL', 'tron') ?? '', new RegExp(`http://127\\.0\\.0\\.1:${closed}: unreachable \\(ECONNREFUSED\\)$`));
  assert.doesNotMatch(refused.text + unreachable.text, /S3cret/);
});

test('gatewayd doctor from the command line exits 1 on a problem', async () => {
  const dir = tempDir('gatewayd-doctor-');
  const config = join(dir, 'gatewayd.toml');
  const tronUrl = `http://127.0.0.1:${await freePort()}`;
  writeFileSync(config, `[tron]\napi_url = "${tronUrl}"\n[database]\npath = "${join(dir, 'gateway.db')}"\n`, { mode: 0o600 });
  const r = runCli(['doctor', '--config', config]);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /FAIL  database/);
  assert.match(r.stdout, /problem\(s\) found/);
});

test('doctor: a provider of another network, and a database of another network, are problems', async (t) => {
  const tron = await tronStandIn();
  t.after(() => tron.close());
  const settings = (network: NetworkName) => `[server]
public_url = "https://pay.example.com"
secret = "0123456789abcdef0123456789abcdef-long-enough"
[tron]
network = "${network}"
api_url = "${tron.url}"
api_key = "k"`;
  const { config, db } = installation(settings('nile'));

  // A Nile instance whose provider is a Nile node: both identity checks pass.
  tron.mode.network = 'nile';
  const good = await doctor(config);
  assert.equal(good.code, 0, good.text);
  assert.match(line(good.lines, 'ok', 'chain') ?? '', /serves tron-nile \(genesis block cd8690dc\)/);
  assert.match(line(good.lines, 'ok', 'usdt') ?? '', /TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf is a contract on tron-nile/);
  assert.match(good.text, /network +tron-nile: a test network, no real money, as the database records/);

  // The same instance pointed at a mainnet provider: named, and a failure.
  tron.mode.network = 'mainnet';
  const wrong = await doctor(config);
  assert.equal(wrong.code, 1, wrong.text);
  assert.match(line(wrong.lines, 'FAIL', 'chain') ?? '', /serves tron-mainnet, not tron-nile \(tron\.network = "nile"\): fix tron\.api_url or tron\.network/);
  assert.match(line(wrong.lines, 'FAIL', 'usdt') ?? '', /has no contract at TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf/);

  // The Nile database under a mainnet configuration.
  writeFileSync(config, `${settings('mainnet')}\n[database]\npath = "${db}"\n`, { mode: 0o640 });
  const mixed = await doctor(config);
  assert.equal(mixed.code, 1, mixed.text);
  assert.match(
    line(mixed.lines, 'FAIL', 'network') ?? '',
    /the database belongs to tron-nile, but tron\.network = "mainnet" \(tron-mainnet\): serve refuses to start/,
  );
});

test(
  'doctor on PostgreSQL: the server and its version, migrations, a role without privileges, autovacuum off for a table, an unreachable server',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' },
  async (t) => {
    const tron = await tronStandIn();
    const scratch = await scratchDatabase();
    t.after(async () => {
      await tron.close();
      await withClient(scratch.url, (c) => c.query('DROP OWNED BY gw_doctor_limited; DROP ROLE IF EXISTS gw_doctor_limited')).catch(() => undefined);
      await scratch.drop();
    });
    const dir = tempDir('gatewayd-doctor-pg-');
    const config = join(dir, 'gatewayd.toml');
    const write = (url: string) =>
      writeFileSync(
        config,
        `[server]\npublic_url = "https://pay.example.com"\ntrust_proxy = true\nsecret = "0123456789abcdef0123456789abcdef-long-enough"\n[tron]\napi_url = "${tron.url}"\napi_key = "k"\n[database]\nurl = "${url}"\n`,
        { mode: 0o600 },
      );
    write(scratch.url);

    const empty = await doctor(config);
    assert.match(line(empty.lines, 'ok', 'database') ?? '', /PostgreSQL 1\d/, empty.text);
    assert.match(line(empty.lines, 'FAIL', 'migrations') ?? '', /no migration was ever applied: run `gatewayd migrate`/, empty.text);

    const migrated = runCli(['migrate', '--config', config]);
    assert.equal(migrated.status, 0, migrated.stderr);
    const healthy = await doctor(config);
    for (const check of ['database', 'privileges', 'migrations', 'network']) {
      assert.ok(line(healthy.lines, 'ok', check), `ok ${check}\n${healthy.text}`);
    }
    // The test server's own setting (a throwaway CI cluster may run without autovacuum).
    const autovacuum = await withClient(scratch.url, (c) => c.query<{ on: boolean }>(`SELECT current_setting('autovacuum') = 'on' AS on`));
    if (autovacuum.rows[0]!.on) assert.match(line(healthy.lines, 'ok', 'statistics') ?? '', /autovacuum keeps the planner statistics/, healthy.text);
    else assert.match(line(healthy.lines, 'WARN', 'statistics') ?? '', /^WARN +statistics +autovacuum is off: /, healthy.text);
    assert.equal(healthy.code, 0, healthy.text);
    assert.match(line(healthy.lines, 'ok', 'migrations') ?? '', /\d+ applied, none pending/);

    // Without autovacuum a table's statistics go stale, and so do the plans of the prepared lookups.
    await withClient(scratch.url, (c) => c.query('ALTER TABLE invoices SET (autovacuum_enabled = false)'));
    const stale = await doctor(config);
    assert.match(line(stale.lines, 'WARN', 'statistics') ?? '', /autovacuum_enabled = false on invoices: .*ANALYZE/, stale.text);

    // A role that may connect but owns nothing and was granted nothing.
    await withClient(scratch.url, (c) =>
      c.query(`DROP ROLE IF EXISTS gw_doctor_limited; CREATE ROLE gw_doctor_limited LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC`),
    );
    const limited = new URL(scratch.url);
    limited.username = 'gw_doctor_limited';
    write(limited.toString());
    const denied = await doctor(config);
    assert.equal(denied.code, 1);
    assert.match(
      line(denied.lines, 'FAIL', 'privileges') ?? '',
      /role gw_doctor_limited lacks CREATE on the schema \(migrations add tables\); SELECT, INSERT, UPDATE, DELETE on .*invoices/,
      denied.text,
    );

    const closed = new URL(scratch.url);
    closed.port = String(await freePort());
    write(closed.toString());
    const unreachable = await doctor(config);
    assert.equal(unreachable.code, 1);
    assert.match(line(unreachable.lines, 'FAIL', 'database') ?? '', /cannot connect \(.*ECONNREFUSED/, unreachable.text);
  },
);
