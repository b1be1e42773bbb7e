/**
 * `gatewayd dev` on solana-devnet and ton-devnet, in process (startDev as the executable runs it):
 * both networks are enabled with the simulators as their one provider, the banner lists them, and
 * an invoice on each, created through the API for a wallet registered through the API, is paid with
 * /_dev/pay (a transferChecked into the owner's token account carrying the option's Solana Pay
 * reference; a jetton transfer carrying the option's comment) and confirmed by the real watchers
 * and readers. A payment one micro-unit short and a failed one do not confirm. Then the same through
 * the executable (its bundle), whose TON path loads @ton/core on first use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { DEV_TOKEN_HEADER } from '../../src/cli/dev-token.js';
import { associatedTokenAddress } from '../../src/chains/solana/address.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import { optionReference } from '../../src/chains/payment-reference.js';
import { devWelcome, startDev } from '../../src/devnet/dev.js';
import { tempDir } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { HttpClient } from '../helpers/http.js';
import { freePort, runCli, startGateway, writeConfig } from '../helpers/process.js';

const SOLANA_OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const TON_OWNER = `0:${'5a'.repeat(32)}`;

test('gatewayd dev pays invoices on solana-devnet and ton-devnet; the real watchers confirm them', async (t) => {
  const dir = tempDir('gatewayd-dev-solana-ton-');
  const path = writeConfig(dir, {
    server: { listen: `127.0.0.1:${await freePort()}` },
    dev: { block_interval_ms: 300, solidity_lag: 2 },
    log: { level: 'warn' },
  });
  const dev = await startDev((overrides) => loadConfig({ path, env: {}, overrides, devMode: true }));
  t.after(() => dev.stop());

  assert.deepEqual(
    dev.config.solanaNetworks.map((n) => [n.network.id, n.providers.map((p) => p.url), n.pollMs]),
    [['solana-devnet', [dev.solana.url], 1000]],
  );
  assert.deepEqual(
    dev.config.tonNetworks.map((n) => [n.network.id, n.providers.map((p) => [p.url, p.kind]), n.pollMs]),
    [['ton-devnet', [[dev.ton.url, 'toncenter']], 1000]],
  );
  const banner = devWelcome(dev);
  assert.match(banner, /Solana +http:\/\/127\.0\.0\.1:\d+ +solana-devnet, JSON-RPC; slot every 300 ms, finalized 2 slots later/);
  assert.match(banner, /TON +http:\/\/127\.0\.0\.1:\d+ +ton-devnet, toncenter v3 index; .* global id 900239/);

  const headers = { 'content-type': 'application/json', [DEV_TOKEN_HEADER]: dev.token };
  const post = async (path: string, body: unknown, extra: Record<string, string> = headers) => {
    const res = await fetch(dev.url + path, { method: 'POST', headers: extra, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const made = await post('/_dev/merchant', { email: 'dev@example.com', password: 'correct-horse-battery' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const api = (path: string, body: unknown, key?: string) =>
    post(`/api/v1${path}`, body, {
      'content-type': 'application/json',
      authorization: `Bearer ${made.body.api_key}`,
      ...(key ? { 'idempotency-key': key } : {}),
    });
  const get = async (path: string) =>
    (await (await fetch(`${dev.url}/api/v1${path}`, { headers: { authorization: `Bearer ${made.body.api_key}` } })).json()) as Record<string, any>;

  // Wallets are registered by the signed-in owner, as in the console.
  const owner = new HttpClient(dev.url, dev.url);
  assert.equal((await owner.post('/auth/login', { email: 'dev@example.com', password: 'correct-horse-battery' })).status, 200);
  const solanaWallet = await owner.post('/wallets', { label: 'Phantom', address: SOLANA_OWNER });
  assert.equal(solanaWallet.status, 201, solanaWallet.text);
  assert.deepEqual(solanaWallet.body.wallet.networks, ['solana-devnet']);
  const tonWallet = await owner.post('/wallets', { label: 'Tonkeeper', address: TON_OWNER });
  assert.equal(tonWallet.status, 201, tonWallet.text);

  // As a merchant does: the wallets are registered before the invoices, and the watchers sweep them
  // at once (a first sweep starts at the final head, so a payment before it would be behind it).
  const health = async () => (await (await fetch(`${dev.url}/api/v1/health`)).json()) as { networks: Array<{ network: string; cursor_block: number | null }> };
  await until('both watchers have swept the new wallets', async () => {
    const cursors = (await health()).networks.filter((n) => n.network === 'solana-devnet' || n.network === 'ton-devnet').map((n) => n.cursor_block);
    return cursors.length === 2 && cursors.every((c) => c !== null) ? true : undefined;
  });

  const invoice = async (order: string, amount: string, walletId: string) => {
    const res = await api('/invoices', { merchant_order_id: order, amount, wallet_id: walletId }, order);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.invoice as { id: string; network: string; payable_amount: string; status: string };
  };
  const sol = await invoice('sol', '12.5', solanaWallet.body.wallet.id);
  const solShort = await invoice('sol-short', '7', solanaWallet.body.wallet.id);
  const ton = await invoice('ton', '3.25', tonWallet.body.wallet.id);
  const tonFailed = await invoice('ton-failed', '4', tonWallet.body.wallet.id);
  assert.equal(sol.network, 'solana-devnet');
  assert.equal(ton.network, 'ton-devnet');

  const solPaid = await post('/_dev/pay', { invoice_id: sol.id });
  assert.equal(solPaid.status, 200, JSON.stringify(solPaid.body));
  assert.equal(solPaid.body.amount, sol.payable_amount);
  assert.equal(solPaid.body.token_account, associatedTokenAddress(SOLANA_OWNER, NETWORKS['solana-devnet'].tokens[0]!.contract));
  assert.equal(solPaid.body.reference, optionReference(NETWORKS['solana-devnet'], sol.id, 0));
  const short = (BigInt(solShort.payable_amount.replace('.', '')) - 1n).toString();
  const shortPaid = await post('/_dev/pay', { invoice_id: solShort.id, amount: `${short.slice(0, -6)}.${short.slice(-6)}` });
  assert.equal(shortPaid.status, 200, JSON.stringify(shortPaid.body));

  const tonPaid = await post('/_dev/pay', { invoice_id: ton.id });
  assert.equal(tonPaid.status, 200, JSON.stringify(tonPaid.body));
  assert.equal(tonPaid.body.comment, ton.id);
  assert.equal(tonPaid.body.amount, ton.payable_amount);
  const failedPaid = await post('/_dev/pay', { invoice_id: tonFailed.id, failed: true });
  assert.equal(failedPaid.body.result, 'ABORTED');

  // Any amount to an owner (what `gatewayd dev transfer --network` sends): into its token account, or its jetton wallet.
  const solTransfer = await post('/_dev/transfer', { network: 'solana-devnet', token: 'USDC', to: SOLANA_OWNER, amount: '0.5' });
  assert.equal(solTransfer.status, 200, JSON.stringify(solTransfer.body));
  assert.equal(solTransfer.body.token_account, associatedTokenAddress(SOLANA_OWNER, NETWORKS['solana-devnet'].tokens[1]!.contract));
  assert.equal(solTransfer.body.raw_amount, '500000');
  const tonTransfer = await post('/_dev/transfer', {
    network: 'ton-devnet',
    to: toFriendlyAddress(TON_OWNER, { bounceable: false, testOnly: true }),
    amount: '0.5',
  });
  assert.equal(tonTransfer.status, 200, JSON.stringify(tonTransfer.body));
  assert.equal(tonTransfer.body.to, TON_OWNER, 'a user-friendly form is answered raw');

  // Refusals: a late payment is not simulated here; a malformed payer is named.
  const late = await post('/_dev/pay', { invoice_id: sol.id, late: true });
  assert.equal(late.status, 400);
  assert.equal(late.body.error.details[0].path, 'late');
  const badFrom = await post('/_dev/transfer', { network: 'ton-devnet', to: TON_OWNER, amount: '1', from: 'not-an-address' });
  assert.equal(badFrom.status, 400);
  assert.equal(badFrom.body.error.details[0].path, 'from');

  const confirmed = async (id: string) =>
    until(`invoice ${id} confirmed`, async () => {
      const r = await get(`/invoices/${id}`);
      return r.invoice.status === 'confirmed' ? r.invoice : undefined;
    });
  const solDone = await confirmed(sol.id);
  assert.equal(solDone.network, 'solana-devnet');
  const tonDone = await confirmed(ton.id);
  assert.equal(tonDone.network, 'ton-devnet');
  // The short payment and the aborted transfer pay nothing.
  assert.equal((await get(`/invoices/${solShort.id}`)).invoice.status, 'pending');
  assert.equal((await get(`/invoices/${tonFailed.id}`)).invoice.status, 'pending');
});

test('the gatewayd executable (its bundle) lists solana-devnet and ton-devnet, and dev pay confirms a TON invoice there', async (t) => {
  const dev = await startGateway({ command: ['dev'], config: { dev: { block_interval_ms: 300, solidity_lag: 2 }, log: { level: 'warn' } } });
  t.after(() => dev.kill());
  await until('the banner', async () => (/ton-devnet, toncenter v3 index/.test(dev.output()) ? true : undefined));
  assert.match(dev.output(), /Solana +http:\/\/127\.0\.0\.1:\d+ +solana-devnet, JSON-RPC/);
  const cli = (args: string[], input?: string) => {
    const r = runCli([...args, '--config', dev.configPath, '--json'], { input });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, any>;
  };
  const made = cli(['dev', 'merchant', 'create', '--email', 'dev@example.com'], 'correct-horse-battery\n');
  const owner = new HttpClient(dev.baseUrl, dev.baseUrl);
  assert.equal((await owner.post('/auth/login', { email: 'dev@example.com', password: 'correct-horse-battery' })).status, 200);
  const wallet = await owner.post('/wallets', { label: 'Tonkeeper', address: TON_OWNER });
  assert.equal(wallet.status, 201, wallet.text);
  // The TON watcher derives jetton wallets with @ton/core, loaded on first use: in the bundle too.
  const sol = cli(['dev', 'transfer', '--network', 'solana-devnet', '--to', SOLANA_OWNER, '--amount', '1.25']);
  assert.equal(sol.raw_amount, '1250000');
  const api = new HttpClient(dev.baseUrl, null);
  const created = await api.post(
    '/invoices',
    { merchant_order_id: 'ton', amount: '2', wallet_id: wallet.body.wallet.id },
    { bearer: made.api_key, headers: { 'idempotency-key': 'ton' } },
  );
  assert.equal(created.status, 201, created.text);
  const paid = cli(['dev', 'pay', created.body.invoice.id]);
  assert.equal(paid.comment, created.body.invoice.id);
  await until('the TON invoice confirmed', async () => {
    const r = await api.get(`/invoices/${created.body.invoice.id}`, { bearer: made.api_key });
    return r.body.invoice.status === 'confirmed' ? true : undefined;
  });
  assert.equal(await dev.stop(), 0);
});
