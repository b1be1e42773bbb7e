import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { PassThrough } from 'node:stream';
import { readPassword } from '../../src/cli/merchant.js';
import { loadConfig } from '../../src/config.js';
import { COMMAND_NAMES, type Command } from '../../src/cli/usage.js';
import { openSqlite } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';
import { cleanEnv, runCli, startGateway, writeConfig } from '../helpers/process.js';

test('version and --help exit 0; an unknown command or option exits 2 with one line', () => {
  const v = runCli(['version']);
  assert.equal(v.status, 0);
  // The program's version, then the Node.js and SQLite this process really runs on.
  const sqlite = openSqlite(':memory:');
  const sqliteVersion = sqlite.prepare('SELECT sqlite_version() AS v').get() as { v: string };
  sqlite.close();
  assert.equal(
    v.stdout,
    `gatewayd ${JSON.parse(readFileSync('package.json', 'utf8')).version} (Node.js ${process.versions.node}, SQLite ${sqliteVersion.v})\n`,
  );
  const h = runCli(['--help']);
  assert.equal(h.status, 0);
  assert.match(h.stdout, /gatewayd serve/);
  const bad = runCli(['frobnicate']);
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
  assert.match(bad.stderr, /unknown command "frobnicate"/);
  const opt = runCli(['migrate', '--bogus']);
  assert.equal(opt.status, 2);
  assert.match(opt.stderr, /--bogus/);
});

test('every command answers --help and -h with its own usage and exit 0', () => {
  for (const command of COMMAND_NAMES) {
    for (const flag of ['--help', '-h']) {
      const r = runCli([...command.split(' '), flag]);
      const name = `${command} ${flag}`;
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
      assert.equal(r.stderr, '', name);
      assert.ok(r.stdout.startsWith(`Usage: gatewayd ${command}`), `${name}: ${r.stdout}`);
      assert.doesNotMatch(r.stdout, /after '--'|Unknown option/, name);
    }
  }
  // The bare group names show their one subcommand's usage too.
  assert.ok(runCli(['merchant', '--help']).stdout.startsWith('Usage: gatewayd merchant create'));
  assert.ok(runCli(['dev', 'merchant', '-h']).stdout.startsWith('Usage: gatewayd dev merchant create'));
});

/** For each command, arguments that are wrong in another way than an unknown option: each a usage error of that command. */
const BAD_VALUES: Record<Command, string[][]> = {
  serve: [['--listen', 'nonsense'], ['extra'], ['--config']],
  migrate: [['extra'], ['--status=yes']],
  init: [
    ['--listen', 'x'],
    ['--public-url', 'notaurl'],
    ['--domain', 'pay example.com'],
    ['--smtp-url', 'mail.example.com'],
  ],
  'merchant create': [[], ['--email', 'x'], ['--email', 'a@example.com', '--name', '']],
  backup: [[], ['a', 'b']],
  'db copy': [[], ['--to', 'mysql://u:p@127.0.0.1/x']],
  doctor: [['extra']],
  'chain status': [['extra']],
  'chain rescan': [[], ['--from-block', 'abc'], ['--from-time', 'yesterday'], ['--from-block', '1', '--from-time', '2026-01-15T12:00:00Z']],
  dev: [['--listen', 'x'], ['frobnicate']],
  'dev merchant create': [[], ['--email', 'x']],
  'dev pay': [[], ['inv_1', '--amount', 'abc'], ['inv_1', '--url', 'ftp://x']],
  'dev transfer': [[], ['--to', 'T', '--amount', 'abc'], ['--to', 'T', '--amount', '1', '--url', 'nope']],
  version: [['extra']],
};

test("a usage error of any command exits 2 with one line naming the fault, then that command's usage line; nothing is written", () => {
  // Every command is covered: a new one needs its wrong arguments here.
  assert.deepEqual(Object.keys(BAD_VALUES).sort(), [...COMMAND_NAMES].sort());
  const cwd = tempDir('gatewayd-usage-');
  const cases = COMMAND_NAMES.flatMap((command) => [['--bogus'], ...BAD_VALUES[command]].map((args) => ({ command, args: [...command.split(' '), ...args] })));
  for (const { command, args } of cases) {
    const r = runCli(args, { cwd, input: '' });
    const name = args.join(' ');
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, '', name);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, `${name}: ${r.stderr}`);
    assert.match(lines[0]!, new RegExp(`^gatewayd: ${command}: `), name);
    assert.ok(lines[1]!.startsWith(`usage: gatewayd ${command}`), `${name}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /after '--'/, name);
  }
  assert.deepEqual(readdirSync(cwd), [], 'no database, configuration or token file left behind');
  // A group without its subcommand names the ones it has.
  const chain = runCli(['chain'], { cwd });
  assert.equal(chain.status, 2);
  assert.match(chain.stderr, /usage: gatewayd chain status[\s\S]*usage: gatewayd chain rescan/);
});

test('merchant create on a terminal asks for the password twice and refuses two different ones', async () => {
  // A terminal as readPassword sees one: isTTY, raw mode, keystrokes arriving as data.
  const terminal = () => Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => terminal }) as unknown as NodeJS.ReadStream;
  const typed = (stdin: NodeJS.ReadStream, ...lines: string[]) => {
    setImmediate(() => (stdin as unknown as PassThrough).write(lines[0]));
    setTimeout(() => (stdin as unknown as PassThrough).write(lines[1] ?? ''), 50);
    return stdin;
  };
  assert.equal(await readPassword({ confirm: true, stdin: typed(terminal(), 'a-long-password\r', 'a-long-password\r') }), 'a-long-password');
  await assert.rejects(readPassword({ confirm: true, stdin: typed(terminal(), 'a-long-password\r', 'a-long-passwerd\r') }), /the two passwords differ/);
});

test('init writes a commented config with a fresh secret and a 0700 data folder; refuses to overwrite', () => {
  const dir = tempDir();
  const r = runCli(['init', '--dir', dir]);
  assert.equal(r.status, 0, r.stderr);
  const file = join(dir, 'gatewayd.toml');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^# /m);
  const parsed = parseToml(text) as any;
  assert.ok(parsed.server.secret.length >= 40);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, 'data')).mode & 0o777, 0o700);
  const dir2 = tempDir();
  runCli(['init', '--dir', dir2]);
  assert.notEqual((parseToml(readFileSync(join(dir2, 'gatewayd.toml'), 'utf8')) as any).server.secret, parsed.server.secret);
  assert.match(r.stdout, /created \S+data \(mode 0700\)/);
  // A data folder that already exists is not claimed as created.
  const dir3 = tempDir();
  mkdirSync(join(dir3, 'data'), { mode: 0o755 });
  const existing = runCli(['init', '--dir', dir3]);
  assert.equal(existing.status, 0, existing.stderr);
  assert.doesNotMatch(existing.stdout, /created/);
  assert.match(existing.stdout, /data already exists; set its mode to 0700/);
  assert.equal(statSync(join(dir3, 'data')).mode & 0o777, 0o700);
  const again = runCli(['init', '--dir', dir]);
  assert.equal(again.status, 2);
  assert.match(again.stderr, /already exists/);
  // The written file is a valid configuration: migrate accepts it.
  const m = runCli(['migrate', '--config', file]);
  assert.equal(m.status, 0, m.stderr);
  assert.equal(statSync(join(dir, 'data', 'gateway.db')).mode & 0o777, 0o600);
  // Its commented networks beside TRON, uncommented as they stand, are a configuration that watches them.
  const uncommented = text.replace(/^# (\[\[(evm|solana|ton)\.networks\]\]|id = |finality = |providers = )/gm, '$1');
  const withNetworks = loadConfig({ env: {}, path: writeFileAt(join(tempDir(), 'gatewayd.toml'), uncommented) });
  assert.deepEqual(
    withNetworks.networks.map((n) => n.id),
    ['tron-mainnet', 'bsc-mainnet', 'solana-mainnet', 'ton-mainnet'],
  );
});

function writeFileAt(path: string, text: string): string {
  writeFileSync(path, text);
  return path;
}

test('a configuration error exits 2 naming the file and key', () => {
  const dir = tempDir();
  const path = join(dir, 'gatewayd.toml');
  writeFileSync(path, '[server]\nlisten = "nowhere"\n');
  const r = runCli(['serve', '--config', path]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, new RegExp(`${path}.*server\\.listen`));
  const env = runCli(['migrate', '--status'], { cwd: dir, env: cleanEnv({ GATEWAYD_CONFIG: path, GATEWAYD_SERVER_LISTEN: '127.0.0.1:1' }) });
  assert.equal(env.status, 0, 'the environment override repairs the file value');
});

test('migrate --status lists applied and pending; serve refuses a database with pending migrations', async () => {
  const dir = tempDir();
  const db = join(dir, 'gateway.db');
  const config = writeConfig(dir, { database: { path: db }, server: { secret: 'x' } });
  const s1 = runCli(['migrate', '--status', '--config', config]);
  assert.equal(s1.status, 0);
  assert.match(s1.stdout, /pending +0001_core/);
  assert.match(s1.stdout, /0 applied, \d+ pending/);
  const m = runCli(['migrate', '--config', config]);
  assert.equal(m.status, 0);
  assert.match(m.stdout, /applied +0001_core/);
  const s2 = runCli(['migrate', '--status', '--config', config]);
  assert.match(s2.stdout, /applied +0001_core/);
  assert.match(s2.stdout, / 0 pending/);

  // Pretend the newest migration is not applied yet: serve must refuse and name `gatewayd migrate`.
  const sqlite = openSqlite(db);
  sqlite.prepare('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)').run();
  sqlite.close();
  const serve = runCli(['serve', '--config', config]);
  assert.equal(serve.status, 1);
  assert.match(serve.stderr, /pending migration.*gatewayd migrate/);
});

test('migrate refuses an edited applied migration', () => {
  const dir = tempDir();
  const db = join(dir, 'gateway.db');
  const config = writeConfig(dir, { database: { path: db } });
  assert.equal(runCli(['migrate', '--config', config]).status, 0);
  const sqlite = openSqlite(db);
  sqlite.prepare(`UPDATE schema_migrations SET checksum = 'deadbeef' WHERE version = 1`).run();
  sqlite.close();
  const r = runCli(['migrate', '--config', config]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /0001_core\.sql was edited after it was applied/);
});

test('serve on a brand-new database migrates it, answers health, and stops cleanly on SIGTERM', async () => {
  const gw = await startGateway();
  try {
    const res = await fetch(`${gw.baseUrl}/api/v1/health`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as any).status, 'ok');
    assert.ok(existsSync(join(gw.dir, 'gateway.db')));
  } finally {
    const code = await gw.stop();
    assert.equal(code, 0);
  }
  assert.match(gw.output(), /"msg":"stopped"/);
});

test('serve with the built-in defaults in an empty folder (no config file)', async () => {
  const dir = tempDir();
  // Port 8080 may be taken on a developer machine: override only the listen address, as the README allows.
  const { freePort } = await import('../helpers/process.js');
  const port = await freePort();
  const { spawn } = await import('node:child_process');
  const { GATEWAYD_BIN } = await import('../helpers/process.js');
  const child = spawn(process.execPath, [GATEWAYD_BIN, 'serve'], { cwd: dir, env: cleanEnv({ GATEWAYD_SERVER_LISTEN: `127.0.0.1:${port}` }), stdio: 'pipe' });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    let ok = false;
    for (let i = 0; i < 200 && !ok; i++) {
      try {
        ok = (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(ok, out);
    assert.ok(existsSync(join(dir, 'data', 'gateway.db')));
    assert.match(out, /server\.secret is not set/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});

test('a port already taken: serve says which setting, variable and flag choose another, exit 1; --listen chooses it for one run', async (t) => {
  const { createServer } = await import('node:net');
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const dir = tempDir();
  const r = runCli(['serve', '--listen', `127.0.0.1:${port}`], { cwd: dir, env: cleanEnv({ GATEWAYD_DATABASE_PATH: join(dir, 'gateway.db') }) });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `server\\.listen 127\\.0\\.0\\.1:${port}: address already in use: another process listens there\\. Choose another address with --listen 127\\.0\\.0\\.1:${port + 1}, GATEWAYD_SERVER_LISTEN=127\\.0\\.0\\.1:${port + 1} or server\\.listen in the configuration file`,
    ),
  );
  const bad = runCli(['serve', '--listen', 'nowhere'], { cwd: dir, env: cleanEnv({ GATEWAYD_DATABASE_PATH: join(dir, 'gateway.db') }) });
  assert.equal(bad.status, 2, 'a usage error');
  assert.match(bad.stderr, /--listen "nowhere" must be host:port[^\n]*server\.listen/);
});
