#!/usr/bin/env node
// `npm run test:binary`: end-to-end check of the packaged executable (dist/gatewayd, see
// bin/build-binary.mjs). The binary is copied alone into an empty folder and run with a bare
// environment (no node on PATH, no node_modules, HOME and TMPDIR inside the folder) against
// loopback stand-ins for TronGrid and SMTP. Prints the binary's size, start-up time to the first
// healthy answer and idle RSS. Exit 0 when every step passed; TODO steps are reported, never
// counted as passes. With TEST_DATABASE_URL set (a PostgreSQL server, as for the tests) one more
// step runs against a scratch database there; without it that step is reported as skipped.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { BINARY_LINE, nodePaths } from './node-runtime.mjs';
import { startSimulatedRates } from '../dist/src/devnet/rate-source.js';
import { scratchDatabase } from '../dist/test/helpers/database.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'dist', 'gatewayd');
if (!existsSync(source)) {
  console.error('test-binary: dist/gatewayd is missing; run `npm run build:binary` first');
  process.exit(2);
}
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const embedded = nodePaths(BINARY_LINE);
const keep = process.argv.includes('--keep');

// ---- harness ---------------------------------------------------------------------------------
const results = [];
const TODO = Symbol('todo');
const SKIP = Symbol('skip');
class Failure extends Error {}
const check = (cond, message) => {
  if (!cond) throw new Failure(message);
};
async function step(name, fn) {
  const started = Date.now();
  try {
    const r = await fn();
    if (r === TODO) {
      results.push({ name, status: 'todo' });
      console.log(`todo    ${name} (hook not implemented yet)`);
    } else if (r === SKIP) {
      results.push({ name, status: 'skip' });
      console.log(`skip    ${name}`);
    } else {
      results.push({ name, status: 'ok' });
      console.log(`ok      ${name} (${Date.now() - started} ms)`);
    }
  } catch (err) {
    results.push({ name, status: 'fail' });
    console.log(`FAIL    ${name}: ${err instanceof Failure ? err.message : err.stack}`);
  }
}

async function freePort() {
  return new Promise((res, rej) => {
    const s = createNetServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

// ---- the empty folder and the bare environment ------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'gatewayd-binary-'));
const home = join(dir, 'home');
const tmp = join(dir, 'tmp');
mkdirSync(home);
mkdirSync(tmp);
const bin = join(dir, 'gatewayd');
copyFileSync(source, bin);
spawnSync('chmod', ['755', bin]);
const emptyPath = join(dir, 'no-bin');
mkdirSync(emptyPath);
const bareEnv = (extra = {}) => ({ HOME: home, TMPDIR: tmp, PATH: emptyPath, ...extra });

function run(args, extraEnv = {}) {
  const r = spawnSync(bin, args, { cwd: dir, env: bareEnv(extraEnv), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

/** Like run() but without blocking this process, for commands that talk to the stand-ins below. */
function runAsync(args, extraEnv = {}, input = '') {
  return new Promise((res) => {
    const child = spawn(bin, args, { cwd: dir, env: bareEnv(extraEnv) });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      res({ status, stdout, stderr });
    });
  });
}

// ---- loopback stand-ins -------------------------------------------------------------------------
const tronRequests = [];
const tron = createServer((req, res) => {
  tronRequests.push(`${req.method} ${req.url}`);
  if (req.url?.startsWith('/walletsolidity/getnowblock')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ blockID: '00', block_header: { raw_data: { number: 69316581, timestamp: Date.now() - 57_000 } } }));
    return;
  }
  // Further TronGrid shapes (transfers, receipts) go here when the chain watcher needs them.
  res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
});
await new Promise((r) => tron.listen(0, '127.0.0.1', r));
const tronUrl = `http://127.0.0.1:${tron.address().port}`;
// The rate sources `init` names are public APIs: a test points them at a loopback stand-in in their shapes.
const rates = await startSimulatedRates();

const mails = [];
const smtp = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  onData(stream, session, cb) {
    let data = '';
    stream.on('data', (d) => (data += d));
    stream.on('end', () => {
      mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
      cb();
    });
  },
});
await new Promise((r) => smtp.listen(0, '127.0.0.1', r));
const smtpPort = smtp.server.address().port;

const port = await freePort();
const metricsPort = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
// The file `init` writes stays as written; the installation-specific values come from the
// environment, as an operator may do with GATEWAYD_* variables.
const serveEnv = {
  GATEWAYD_SERVER_LISTEN: `127.0.0.1:${port}`,
  GATEWAYD_SERVER_PUBLIC_URL: baseUrl,
  GATEWAYD_TRON_API_URL: tronUrl,
  GATEWAYD_EMAIL_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
  // The stand-in is a local relay without STARTTLS: the explicit opt-out from required TLS.
  GATEWAYD_EMAIL_SMTP_TLS: 'opportunistic',
  GATEWAYD_METRICS_ENABLED: 'true',
  GATEWAYD_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
};
const figures = {
  sizeMB: statSync(bin).size / 1e6,
  nodeMB: existsSync(embedded.node) ? statSync(embedded.node).size / 1e6 : undefined,
  startupMs: [],
  startupCpuMs: [],
  rssMiB: undefined,
};

/** Starts serve and resolves once /api/v1/health answers 200, with the time that took. */
async function startServe() {
  const t0 = performance.now();
  const child = spawn(bin, ['serve'], { cwd: dir, env: bareEnv(serveEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  for (;;) {
    if (child.exitCode !== null) throw new Failure(`serve exited with ${child.exitCode}: ${output}`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/health`);
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - t0 > 20_000) {
      child.kill('SIGKILL');
      throw new Failure(`serve did not become healthy in 20 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  // CPU time spent until healthy: unlike wall time, it does not depend on how busy the machine is.
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const cpuMs = ((Number(stat[11]) + Number(stat[12])) * 1000) / 100;
  return {
    child,
    ms,
    cpuMs,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

const json = async (path, init) => {
  const res = await fetch(`${baseUrl}${path}`, init);
  return { status: res.status, headers: res.headers, body: await res.json().catch(() => undefined) };
};

// ---- steps ------------------------------------------------------------------------------------
console.log(`test-binary: ${bin} (${figures.sizeMB.toFixed(1)} MB), bare environment, no node on PATH`);

await step('version runs without node or node_modules, naming the embedded Node.js and SQLite', () => {
  const r = run(['version']);
  check(r.status === 0, `exit ${r.status}: ${r.stderr}${r.error ?? ''}`);
  const m = /^gatewayd (\S+) \(Node\.js (\d+\.\d+\.\d+), SQLite (3\.\d+\.\d+)\)$/.exec(r.stdout.trim());
  check(m && m[1] === version, `printed ${JSON.stringify(r.stdout)}`);
  check(m[2] === embedded.version, `embeds Node.js ${m[2]}, expected ${embedded.version} (bin/node-runtime.mjs)`);
  figures.node = m[2];
  figures.sqlite = m[3];
  check(!existsSync(join(dir, 'node_modules')), 'a node_modules folder appeared');
});

await step('init writes gatewayd.toml (0600) and data/ (0700)', () => {
  const r = run(['init']);
  check(r.status === 0, `exit ${r.status}: ${r.stderr}`);
  check((statSync(join(dir, 'gatewayd.toml')).mode & 0o777) === 0o600, 'gatewayd.toml is not 0600');
  check((statSync(join(dir, 'data')).mode & 0o777) === 0o700, 'data/ is not 0700');
  // The one change to the file: every [[pricing.sources]] gets the stand-in's url (a test never reaches the internet).
  const toml = join(dir, 'gatewayd.toml');
  const text = readFileSync(toml, 'utf8');
  check(/^kind = "coingecko"$/m.test(text), 'init names the public rate sources');
  writeFileSync(toml, text.replace(/^(kind = "(?:coingecko|kraken|coinbase)")$/gm, `$1\nurl = "${rates.url}"`));
});

await step('migrate applies the embedded migrations', () => {
  const r = run(['migrate']);
  check(r.status === 0, `exit ${r.status}: ${r.stderr}`);
  check(/applied +0001_core/.test(r.stdout), r.stdout);
  const migrations = readdirSync(join(root, 'migrations')).filter((f) => f.endsWith('.sql'));
  const s = run(['migrate', '--status']);
  check(new RegExp(`${migrations.length} applied, 0 pending`).test(s.stdout), `every file under migrations/ is embedded: ${s.stdout}`);
  check((statSync(join(dir, 'data', 'gateway.db')).mode & 0o777) === 0o600, 'the database is not 0600');
});

await step('native addons load from the content-addressed cache (and the temp dir when HOME is unusable)', () => {
  const cache = join(home, '.cache', 'gatewayd');
  check(existsSync(cache) && readdirSync(cache).some((f) => /^[0-9a-f]{16}-better_sqlite3\.node$/.test(f)), `no cached addon in ${cache}`);
  // A HOME that is a file: ~/.cache cannot be created (root ignores permission bits, so a 0500
  // folder would not do).
  const fileHome = join(dir, 'home-is-a-file');
  writeFileSync(fileHome, '');
  const r = run(['migrate', '--status'], { HOME: fileHome, XDG_CACHE_HOME: join(fileHome, 'cache') });
  check(r.status === 0, `exit ${r.status} with HOME unwritable: ${r.stderr}`);
  check(
    readdirSync(tmp).some((f) => f.startsWith('gatewayd-')),
    'no fallback cache under TMPDIR',
  );
  // A damaged (or planted) cached addon is never loaded: it is replaced by the embedded copy.
  const cached = join(
    cache,
    readdirSync(cache).find((f) => f.endsWith('-better_sqlite3.node')),
  );
  const good = readFileSync(cached);
  rmSync(cached);
  writeFileSync(cached, 'not a library');
  const again = run(['migrate', '--status']);
  check(again.status === 0, `exit ${again.status} with a damaged cached addon: ${again.stderr}`);
  check(readFileSync(cached).equals(good), 'the damaged cached addon was not replaced');
});

await step('doctor: sqlite and argon2 work inside the binary; TRON, SMTP and rate stand-ins reachable; SMTP on loopback is exempt from required TLS', async () => {
  const r = await runAsync(['doctor'], serveEnv);
  check(r.status === 0, `exit ${r.status}:\n${r.stdout}${r.stderr}`);
  check(/^ok +runtime .*argon2 ok/m.test(r.stdout), r.stdout);
  check(/^ok +tron /m.test(r.stdout), r.stdout);
  // The SMTP stand-in offers no STARTTLS: on loopback there is no network path to strip it from, so that is fine.
  check(/^ok +smtp +\S+ answers EHLO; STARTTLS only when offered/m.test(r.stdout), r.stdout);
  check(/^ok +rates +median rates now/m.test(r.stdout), r.stdout);
  check(tronRequests.includes('GET /walletsolidity/getnowblock'), 'the TRON stand-in was not asked');
});

let server;
await step('serve becomes healthy', async () => {
  server = await startServe();
  figures.startupMs.push(server.ms);
  figures.startupCpuMs.push(server.cpuMs);
  const h = await json('/api/v1/health');
  check(h.body?.status === 'ok' && h.body?.version === version, JSON.stringify(h.body));
  check(h.body?.deliveries?.backlog === 0, JSON.stringify(h.body));
});

await step('the OpenAPI document is served', async () => {
  const r = await json('/api/v1/openapi.json');
  check(r.status === 200 && r.body?.openapi === '3.1.0', `status ${r.status}`);
  check(r.body.paths && Object.keys(r.body.paths).includes('/api/v1/health'), 'no /api/v1/health in paths');
});

// The end-to-end journey. Each step runs once its feature's route is in the served OpenAPI
// document and reports TODO until then (never a pass); ctx carries what later steps need.
const ctx = { baseUrl, mails, tronUrl, tronRequests, cookie: undefined, checkoutUrl: undefined };
let served = new Set();
const has = (path) => served.has(path);
const post = (path, body, headers = {}) =>
  json(path, { method: 'POST', headers: { 'content-type': 'application/json', origin: baseUrl, ...headers }, body: JSON.stringify(body) });

/** The first mail to `to`, decoded from quoted-printable enough to read a link. */
async function waitForMail(to, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = mails.find((m) => m.to.includes(to));
    if (mail) return mail.data.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
    if (Date.now() > deadline) throw new Failure(`no mail to ${to} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

await step('register with mail, confirm the link, reach /me', async () => {
  served = new Set(Object.keys((await json('/api/v1/openapi.json')).body.paths));
  if (!has('/api/v1/auth/register')) return TODO;
  const email = 'owner@example.test';
  const r = await post('/api/v1/auth/register', { email, password: 'a long enough passphrase' });
  check(r.status === 201 && r.body?.verification_required === true, `register: ${r.status} ${JSON.stringify(r.body)}`);
  const mail = await waitForMail(email);
  const token = /#verify=([A-Za-z0-9_-]{43})/.exec(mail)?.[1];
  check(token, 'no #verify= link in the mail');
  const v = await post('/api/v1/auth/verify-email', { token });
  check(v.status === 200, `verify-email: ${v.status} ${JSON.stringify(v.body)}`);
  ctx.cookie = (v.headers.get('set-cookie') ?? '').split(';')[0];
  check(ctx.cookie.includes('='), 'no session cookie');
  const me = await json('/api/v1/me', { headers: { cookie: ctx.cookie } });
  check(me.status === 200, `/me: ${me.status}`);
});

await step('merchant create from the command line, then sign in', async () => {
  if (!/merchant create/.test(run(['--help']).stdout)) return TODO;
  const r = await runAsync(['merchant', 'create', '--email', 'ops@example.test'], serveEnv, 'an operator passphrase\n');
  check(r.status === 0, `exit ${r.status}: ${r.stderr}`);
  const login = await post('/api/v1/auth/login', { email: 'ops@example.test', password: 'an operator passphrase' });
  check(login.status === 200, `login: ${login.status} ${JSON.stringify(login.body)}`);
});

await step('create an invoice', async () => {
  if (!has('/api/v1/invoices') || !ctx.cookie) return TODO;
  const session = { cookie: ctx.cookie };
  const w = await post('/api/v1/wallets', { label: 'Main', address: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx' }, session);
  check(w.status === 201, `wallet: ${w.status} ${JSON.stringify(w.body)}`);
  const body = { merchant_order_id: 'order-1', amount: '41.5', wallet_id: w.body.wallet.id, description: 'Binary test' };
  const inv = await post('/api/v1/invoices', body, { ...session, 'idempotency-key': 'binary-test-1' });
  check(inv.status === 201, `invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
  const i = inv.body.invoice;
  check(i.base_amount === '41.500000' && i.adjustment === '0.000001' && i.payable_amount === '41.500001', `amounts: ${JSON.stringify(i)}`);
  check(i.status === 'pending' && i.checkout_url.startsWith(`${baseUrl}/pay/`), `invoice: ${JSON.stringify(i)}`);
  const replay = await post('/api/v1/invoices', body, { ...session, 'idempotency-key': 'binary-test-1' });
  check(replay.status === 200 && replay.body.idempotent_replay === true && replay.body.invoice.id === i.id, 'idempotent replay');
  const view = await json(`/api/v1/checkout/${i.checkout_token}`);
  check(view.status === 200 && view.body.invoice.payable_amount === '41.500001' && view.body.invoice.metadata === undefined, 'checkout view');
  ctx.checkoutUrl = i.checkout_url;
  ctx.payable = i.payable_amount;
  ctx.address = i.wallet_address;
});

await step('open the checkout page', async () => {
  if (!ctx.checkoutUrl) return TODO;
  const res = await fetch(ctx.checkoutUrl, { headers: { 'accept-language': 'ar' } });
  const html = await res.text();
  check(res.status === 200, `checkout page: ${res.status}`);
  check((res.headers.get('content-type') ?? '').startsWith('text/html'), `content-type ${res.headers.get('content-type')}`);
  check(html.includes(ctx.payable) && html.includes(ctx.address), 'the page shows the exact amount and the address');
  check(/dir="rtl"/.test(html), 'Arabic from Accept-Language is right-to-left');
  check(html.includes('<svg'), 'the QR code is rendered on the server');
  const missing = await fetch(`${baseUrl}/pay/${'x'.repeat(43)}`);
  check(missing.status === 404 && (missing.headers.get('content-type') ?? '').startsWith('text/html'), 'an unknown checkout is a friendly 404 page');
  const css = /href="(\/static\/app\.css[^"]*)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  check(css, 'the page links its stylesheet');
  const sheet = await fetch(`${baseUrl}${css}`);
  check(sheet.status === 200, `stylesheet ${css}: ${sheet.status} (static files are inside the binary)`);
});

await step('the guides are served from inside the binary', async () => {
  const res = await fetch(`${baseUrl}/guides/shops`, { headers: { accept: 'text/html' } });
  const html = await res.text();
  check(res.status === 200, `/guides/shops: ${res.status}`);
  check(/<h1 id="shops-the-epay-and-epusdt-protocols">/.test(html), 'the shops guide, rendered at build time, is embedded');
});

await step('metrics on their own loopback listener', async () => {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const text = await res.text();
  check(res.status === 200, `status ${res.status}`);
  check(/gatewayd_http_requests_total\{method="GET",route="\/api\/v1\/health",status="200"\} \d+/.test(text), 'no request counter');
  check(/gatewayd_invoices\{status="pending"\} \d+/.test(text), 'no invoice gauge');
  check((await fetch(`${baseUrl}/metrics`)).status === 404, '/metrics is on the public listener');
});

await step('PostgreSQL (TEST_DATABASE_URL): migrate and migrate --status through the embedded pg library', async () => {
  if (!process.env.TEST_DATABASE_URL) return SKIP;
  const scratch = await scratchDatabase();
  try {
    const env = { GATEWAYD_DATABASE_URL: scratch.url };
    const r = run(['migrate'], env);
    check(r.status === 0, `exit ${r.status}: ${r.stderr}`);
    const s = run(['migrate', '--status'], env);
    check(s.status === 0 && / 0 pending/.test(s.stdout), `${s.stdout}${s.stderr}`);
  } finally {
    await scratch.drop();
  }
});

await step('backup while serving', () => {
  const r = run(['backup', join(dir, 'backup.db')]);
  check(r.status === 0, `exit ${r.status}: ${r.stderr}`);
  check((statSync(join(dir, 'backup.db')).mode & 0o777) === 0o600, 'backup is not 0600');
});

await step('idle RSS', async () => {
  await new Promise((r) => setTimeout(r, 2000));
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  check(kb > 0, 'no VmRSS');
  figures.rssMiB = kb / 1024;
});

await step('SIGTERM stops serve with exit 0', async () => {
  const code = await server.stop();
  check(code === 0, `exit ${code}: ${server.output().slice(-500)}`);
});

await step('start-up time over two more starts', async () => {
  for (let i = 0; i < 2; i++) {
    const s = await startServe();
    figures.startupMs.push(s.ms);
    figures.startupCpuMs.push(s.cpuMs);
    check((await s.stop()) === 0, 'serve did not stop cleanly');
  }
});

await step('install.sh --prefix with this binary, then again as an upgrade', () => {
  const prefix = join(dir, 'root');
  const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: home, TMPDIR: tmp };
  const first = spawnSync('bash', [join(root, 'install.sh'), '--prefix', prefix, '--binary', bin], { env, encoding: 'utf8' });
  check(first.status === 0, `exit ${first.status}: ${first.stdout}${first.stderr}`);
  const conf = join(prefix, 'etc/gatewayd/gatewayd.toml');
  const before = readFileSync(conf, 'utf8');
  check((statSync(conf).mode & 0o777) === 0o640, 'config is not 0640');
  const again = spawnSync('bash', [join(root, 'install.sh'), '--prefix', prefix, '--binary', bin], { env, encoding: 'utf8' });
  check(again.status === 0 && /upgrade done/.test(again.stdout), `${again.stdout}${again.stderr}`);
  check(readFileSync(conf, 'utf8') === before, 'the upgrade changed the configuration');
});

// ---- report -----------------------------------------------------------------------------------
tron.close();
smtp.close();
await rates.close();
if (!keep) rmSync(dir, { recursive: true, force: true });
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(
  `figures: Node.js ${figures.node}, SQLite ${figures.sqlite}; size ${figures.sizeMB.toFixed(1)} MB (the Node.js executable alone: ${figures.nodeMB?.toFixed(1)} MB unstripped); start-up to first healthy answer ${median(figures.startupMs)?.toFixed(0)} ms ` +
    `(median of ${figures.startupMs.length}: ${figures.startupMs.map((m) => m.toFixed(0)).join(', ')}; ` +
    `CPU time ${median(figures.startupCpuMs)?.toFixed(0)} ms; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores); ` +
    `idle RSS ${figures.rssMiB?.toFixed(1)} MiB`,
);
const failed = results.filter((r) => r.status === 'fail').length;
const todo = results.filter((r) => r.status === 'todo').length;
const passed = results.filter((r) => r.status === 'ok').length;
const skipped = results.filter((r) => r.status === 'skip').length;
console.log(`test-binary: ${passed} passed, ${failed} failed, ${todo} todo, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
