/**
 * `gatewayd dev` as an integrator runs it: the real executable as a child process, driven from
 * other processes (`gatewayd dev merchant create`, `gatewayd dev pay`, `gatewayd dev transfer`) and
 * over HTTP, with a plain-http webhook receiver on loopback. Payments are transactions in the
 * simulated node's blocks, found by the real scanner: the exact one confirms and its signed
 * invoice.confirmed arrives; a wrong amount, a fake token and a failed transaction do not confirm.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { NETWORKS } from '../../src/lib/tron.js';
import { tempDir } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { HttpClient } from '../helpers/http.js';
import { cleanEnv, freePort, GATEWAYD_BIN, runCli, startGateway, writeConfig, type CliResult } from '../helpers/process.js';
import { spawn } from 'node:child_process';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/hooks/gatewayd`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const json = (r: CliResult) => {
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, any>;
};

test('gatewayd dev: dev pay confirms an invoice and a signed invoice.confirmed reaches a local receiver; wrong amount, fake token and failed transaction do not confirm', async (t) => {
  const hooks = await receiver();
  t.after(() => hooks.close());
  const dev = await startGateway({
    command: ['dev'],
    // Fast blocks for the test; the webhook receiver is plain http on localhost (allowed under dev only).
    config: { dev: { block_interval_ms: 500, solidity_lag: 2 }, log: { level: 'warn' } },
  });
  t.after(() => dev.kill());
  const cli = (args: string[], input?: string) => runCli([...args, '--config', dev.configPath, '--json'], { input });

  assert.match(dev.output(), /tron-devnet, a simulated chain\. Test network: no real money\./);
  const databasePath = /database +(\S+)/.exec(dev.output())![1]!;
  assert.ok(existsSync(databasePath), 'a fresh database in a temporary folder');

  // The merchant, its API key, a wallet and a webhook, as the five-minute tour makes them.
  const made = json(cli(['dev', 'merchant', 'create', '--email', 'dev@example.com'], 'correct-horse-battery\n'));
  assert.match(made.api_key, /^gw_live_/);
  // The banner's commands are this instance's own (it is not on the default port): as printed, without --config, they reach it.
  const printed = /gatewayd dev merchant create(.*) --email you@example\.com/.exec(dev.output())![1]!;
  assert.equal(printed, ` --url ${dev.baseUrl}`);
  assert.match(dev.output(), new RegExp(`gatewayd dev pay --url ${dev.baseUrl} INVOICE_ID`));
  const asPrinted = runCli(['dev', 'merchant', 'create', ...printed.trim().split(' '), '--email', 'printed@example.com', '--json'], {
    input: 'correct-horse-battery\n',
  });
  assert.match(json(asPrinted).api_key, /^gw_live_/);
  const owner = new HttpClient(dev.baseUrl, dev.baseUrl);
  assert.equal((await owner.post('/auth/login', { email: 'dev@example.com', password: 'correct-horse-battery' })).status, 200);
  const address = 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx';
  const wallet = await owner.post('/wallets', { label: 'Main', address });
  assert.equal(wallet.status, 201, wallet.text);
  assert.equal(wallet.body.wallet.network, 'tron-devnet');
  const hook = await owner.post('/webhooks', { url: hooks.url });
  assert.equal(hook.status, 201, hook.text);
  const secret = hook.body.secret as string;

  const api = new HttpClient(dev.baseUrl, null);
  const invoice = async (order: string, amount: string) => {
    const res = await api.post(
      '/invoices',
      { merchant_order_id: order, amount, wallet_id: wallet.body.wallet.id },
      { bearer: made.api_key, headers: { 'idempotency-key': order } },
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.invoice.network, 'tron-devnet');
    assert.equal(res.body.invoice.token_contract, NETWORKS.devnet.usdtContract);
    return res.body.invoice as { id: string; payable_amount: string; expires_at: string };
  };
  const exact = await invoice('exact', '12.5');
  const wrong = await invoice('wrong', '20');
  const fake = await invoice('fake', '30');
  const failed = await invoice('failed', '40');
  // The tour's invoice priced in CNY: converted at the simulated rate source dev runs on loopback.
  assert.match(dev.output(), /rates +http:\/\/127\.0\.0\.1:\d+ +simulated CoinGecko, Kraken and Coinbase/);
  const cny = await until('a CNY invoice (the first rates are read at start)', async () => {
    const res = await api.post(
      '/invoices',
      { merchant_order_id: 'cny', amount: '100.00', currency: 'CNY', wallet_id: wallet.body.wallet.id },
      { bearer: made.api_key, headers: { 'idempotency-key': 'cny' } },
    );
    return res.status === 201 ? res.body.invoice : undefined;
  });
  assert.equal(cny.base_amount, '14.060000');
  assert.deepEqual(cny.price.sources, ['coinbase', 'coingecko']);

  const paid = json(cli(['dev', 'pay', exact.id, '--from', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre']));
  assert.equal(paid.amount, exact.payable_amount);
  assert.equal(paid.to, address);
  // One micro-unit short; a token that calls itself USDT; a transaction that runs out of energy.
  const short = (BigInt(wrong.payable_amount.replace('.', '')) - 1n).toString().padStart(7, '0');
  const wrongPaid = json(cli(['dev', 'pay', wrong.id, '--amount', `${short.slice(0, -6)}.${short.slice(-6)}`]));
  const fakePaid = json(cli(['dev', 'pay', fake.id, '--fake-token']));
  assert.notEqual(fakePaid.token_contract, NETWORKS.devnet.usdtContract);
  const failedPaid = json(cli(['dev', 'pay', failed.id, '--failed']));
  assert.equal(failedPaid.result, 'FAILED');
  // Any amount to any address: recorded as an unmatched transfer of this wallet.
  const stray = json(cli(['dev', 'transfer', '--to', address, '--amount', '0.5']));

  // The exact payment confirms, through the scanner; its webhook arrives signed.
  const confirmed = await until('invoice.confirmed at the receiver', async () =>
    hooks.received.find((r) => r.headers['x-gateway-event-id'] !== undefined && JSON.parse(r.body).type === 'invoice.confirmed'),
  );
  const event = JSON.parse(confirmed.body);
  assert.equal(event.data.invoice.id, exact.id);
  assert.equal(event.data.invoice.status, 'confirmed');
  assert.equal(event.data.invoice.network, 'tron-devnet');
  assert.equal(event.data.transaction.tx_hash, paid.tx_id);
  assert.equal(event.data.transaction.from, 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre');
  const timestamp = confirmed.headers['x-gateway-timestamp'] as string;
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${confirmed.body}`).digest('hex')}`;
  assert.equal(confirmed.headers['x-gateway-signature'], expected, 'signed with the webhook secret');

  // Once the scanner is past every other transaction's block, none of them confirmed anything.
  const last = Math.max(wrongPaid.block_number, fakePaid.block_number, failedPaid.block_number, stray.block_number);
  await until('the scan past the other payments', async () => {
    const health = (await (await fetch(`${dev.baseUrl}/api/v1/health`)).json()) as { watcher: { scan?: { block: number } } };
    return (health.watcher.scan?.block ?? 0) >= last ? true : undefined;
  });
  for (const inv of [wrong, fake, failed]) {
    const res = await api.get(`/invoices/${inv.id}`, { bearer: made.api_key });
    assert.equal(res.body.invoice.status, 'pending', `${inv.id} stays pending`);
  }
  const dashboard = await owner.get('/me');
  const unmatched = (dashboard.body.unmatched_transfers ?? []) as Array<{ tx_hash: string; amount: string }>;
  assert.ok(
    unmatched.some((u) => u.tx_hash === wrongPaid.tx_id),
    'the short payment is an unmatched transfer',
  );
  assert.ok(
    unmatched.some((u) => u.tx_hash === stray.tx_id && u.amount === '0.500000'),
    'the stray transfer too',
  );
  assert.ok(!unmatched.some((u) => u.tx_hash === fakePaid.tx_id || u.tx_hash === failedPaid.tx_id), 'a fake token or a failed transaction moved no USDT');
  assert.equal(hooks.received.filter((r) => JSON.parse(r.body).type === 'invoice.confirmed').length, 1);

  // --late: into the first block after the invoice's window.
  const late = json(cli(['dev', 'pay', wrong.id, '--late']));
  assert.ok(Date.parse(late.block_timestamp) > Date.parse(wrong.expires_at), 'after expires_at');

  // Stopping removes the temporary database.
  assert.equal(await dev.stop(), 0);
  assert.ok(!existsSync(databasePath), 'the fresh dev database is removed at exit');
});

test('gatewayd dev refuses a mainnet database; dev pay without a dev instance says so', async () => {
  const dir = tempDir('gatewayd-devnet-');
  const db = join(dir, 'gateway.db');
  const config = writeConfig(dir, { database: { path: db }, server: { listen: `127.0.0.1:${await freePort()}` } });
  assert.equal(runCli(['migrate', '--config', config]).status, 0);
  // A mainnet database records its network at its first real use.
  const made = runCli(['merchant', 'create', '--email', 'owner@example.com', '--config', config], { input: 'correct-horse-battery\n' });
  assert.equal(made.status, 0, made.stderr);

  const r = runCli(['dev', '--config', config, '--database', db], { env: cleanEnv({ GATEWAYD_LOG_LEVEL: 'warn' }) });
  assert.equal(r.status, 2, r.stdout + r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /gateway\.db: this database belongs to tron-mainnet, but `gatewayd dev` runs tron-devnet/);

  // A usage error is exit 2 before any request, like every other (it was 1, from the instance's 400).
  for (const args of [
    ['dev', 'pay', 'inv_x', '--amount', 'abc'],
    ['dev', 'transfer', '--to', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', '--amount', '1.2345678'],
  ]) {
    const bad = runCli([...args, '--config', config]);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--amount "(abc|1\.2345678)" is not a USDT amount such as 12\.5 or 20\.000137/);
  }
  const pay = runCli(['dev', 'pay', 'inv_x', '--config', config]);
  assert.equal(pay.status, 1);
  assert.match(pay.stderr, /no dev instance answers at http:\/\/127\.0\.0\.1:\d+ \(start `gatewayd dev` first, or give --url\)/);
});

test('gatewayd dev --listen without a configuration file listens where it is told (its own secret for the run does not drop the flag)', async () => {
  const dir = tempDir('gatewayd-dev-listen-');
  const port = await freePort();
  const child = spawn(process.execPath, [GATEWAYD_BIN, 'dev', '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    env: cleanEnv({ GATEWAYD_LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  try {
    await until('the banner', async () => (/gateway\s+http:\/\//.test(output) || child.exitCode !== null ? true : undefined));
    assert.match(output, new RegExp(`gateway\\s+http://127\\.0\\.0\\.1:${port}\\s`), output);
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
    assert.equal(health.status, 200);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});
