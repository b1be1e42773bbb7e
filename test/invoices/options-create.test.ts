/**
 * POST /invoices on several networks (docs/api.md, "Networks, tokens and options"): the defaults,
 * an explicit network and token, the payer's choice of options, each with its own unique payable
 * amount reserved on its own (network, token contract, address), every refusal (nothing written),
 * and replays. Real server, real database (SQLite, or PostgreSQL with TEST_DATABASE_URL); every
 * answer is checked against the served OpenAPI document.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { TestApp } from '../helpers/app.js';
import type { DocumentValidator } from '../helpers/openapi-validator.js';
import { ADDRESSES, createInvoice, newKey, shop, type Shop } from '../helpers/shop.js';
import { assertDocumented, contractOf, EVM_ADDRESSES, multichainShop, startMultichainApp } from '../helpers/multichain.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';

let t: TestApp;
let validator: DocumentValidator;
before(async () => {
  ({ t, validator } = await startMultichainApp());
});
after(() => t.close());

const BSC_USDT = contractOf('bsc-mainnet', 'USDT');
const ETH_USDC = contractOf('ethereum-mainnet', 'USDC');
const BASE_USDC = contractOf('base-mainnet', 'USDC');

async function reservationsOf(invoiceId: string) {
  const rows = await t.deps.db.selectFrom('amount_reservations').selectAll().where('invoice_id', '=', invoiceId).execute();
  return rows.map((r) => ({
    network: r.network,
    token_contract: r.token_contract,
    address: r.address,
    amount: Number(r.amount),
    reserved_until: Number(r.reserved_until),
  }));
}

/** Rows of every table a creation writes, to show a refusal wrote nothing. */
async function written() {
  const counts: Record<string, number> = {};
  for (const table of ['invoices', 'invoice_options', 'amount_reservations', 'events']) {
    counts[table] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.deps.db)).rows[0]!.n);
  }
  return counts;
}

test('defaults: a TRON wallet asks tron-mainnet USDT, and `options` holds that one option with its tron: link', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const res = await createInvoice(s.client, { amount: '25', wallet_id: s.walletId });
  assert.equal(res.status, 201, res.text);
  assertDocumented(validator, 'POST', '/api/v1/invoices', res);
  const inv = res.body.invoice;
  assert.equal(inv.network, 'tron-mainnet');
  assert.equal(inv.token, 'USDT');
  assert.equal(inv.token_contract, USDT_CONTRACT);
  assert.deepEqual(inv.options, [
    {
      network: 'tron-mainnet',
      token: 'USDT',
      token_contract: USDT_CONTRACT,
      address: ADDRESSES[0],
      payable_amount: inv.payable_amount,
      status: 'open',
      payment_uri: `tron:${ADDRESSES[0]}?token=${USDT_CONTRACT}&amount=${inv.payable_amount}`,
    },
  ]);
  // A single-option invoice stores no option row: the invoice row is option 0.
  assert.equal((await t.deps.db.selectFrom('invoice_options').selectAll().where('invoice_id', '=', inv.id).execute()).length, 0);
  const got = await s.client.get(`/invoices/${inv.id}`);
  assertDocumented(validator, 'GET', '/api/v1/invoices/{id}', got);
  assert.deepEqual(got.body.invoice, inv);
});

test('an explicit network and token: BSC USDC (18 decimals) is received by the EVM wallet, six decimals in the API, raw × 10^12 in the EIP-681 link', async () => {
  const s = await multichainShop(t, ADDRESSES[1], EVM_ADDRESSES[0]);
  const res = await createInvoice(s.client, { amount: '10', wallet_id: s.walletId, network: 'bsc-mainnet', token: 'USDC' });
  assert.equal(res.status, 201, res.text);
  assertDocumented(validator, 'POST', '/api/v1/invoices', res);
  const inv = res.body.invoice;
  const usdc = contractOf('bsc-mainnet', 'USDC');
  assert.equal(inv.network, 'bsc-mainnet');
  assert.equal(inv.token, 'USDC');
  assert.equal(inv.token_contract, usdc);
  // The TRON wallet does not receive on BSC: the merchant's EVM wallet does.
  assert.equal(inv.wallet_id, s.evmWalletId);
  assert.equal(inv.wallet_address, EVM_ADDRESSES[0]);
  assert.equal(inv.payable_amount, '10.000001');
  assert.equal(inv.options.length, 1);
  assert.equal(inv.options[0].payment_uri, `ethereum:${usdc}@56/transfer?address=${EVM_ADDRESSES[0]}&uint256=10000001000000000000`);
  assert.deepEqual(
    (await reservationsOf(inv.id)).map((r) => [r.network, r.token_contract, r.address, r.amount]),
    [['bsc-mainnet', usdc, EVM_ADDRESSES[0], 10_000_001]],
  );
  // Base has USDC only: it is the default token there.
  const base = await createInvoice(s.client, { amount: '10', wallet_id: s.evmWalletId, network: 'base-mainnet' });
  assert.equal(base.status, 201, base.text);
  assert.equal(base.body.invoice.token, 'USDC');
  assert.equal(base.body.invoice.token_contract, BASE_USDC);
  // The EVM wallet's own first network is its default.
  const own = await createInvoice(s.client, { amount: '10', wallet_id: s.evmWalletId });
  assert.equal(own.status, 201, own.text);
  assert.equal(own.body.invoice.network, 'bsc-mainnet');
  assert.equal(own.body.invoice.token, 'USDT');
});

test('options: each its own unique amount on its own network, token and address, reserved at creation; option 0 is the invoice itself', async () => {
  const s = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[1]);
  const options = [
    { network: 'tron-mainnet', token: 'USDT' },
    { network: 'bsc-mainnet', token: 'USDT' },
    { network: 'ethereum-mainnet', token: 'USDC' },
  ];
  // Two earlier invoices take the first BSC amounts, so the options' amounts differ.
  for (let i = 0; i < 2; i++) assert.equal((await createInvoice(s.client, { amount: '40', wallet_id: s.evmWalletId })).status, 201);
  const res = await createInvoice(s.client, { amount: '40', wallet_id: s.walletId, options, expires_in_minutes: 30 });
  assert.equal(res.status, 201, res.text);
  assertDocumented(validator, 'POST', '/api/v1/invoices', res);
  const inv = res.body.invoice;
  assert.equal(inv.network, 'tron-mainnet');
  assert.equal(inv.wallet_id, s.walletId);
  assert.deepEqual(
    inv.options.map((o: any) => [o.network, o.token, o.token_contract, o.address, o.payable_amount, o.status]),
    [
      ['tron-mainnet', 'USDT', USDT_CONTRACT, ADDRESSES[2], '40.000001', 'open'],
      ['bsc-mainnet', 'USDT', BSC_USDT, EVM_ADDRESSES[1], '40.000003', 'open'],
      ['ethereum-mainnet', 'USDC', ETH_USDC, EVM_ADDRESSES[1], '40.000001', 'open'],
    ],
  );
  assert.equal(inv.payable_amount, '40.000001');
  assert.equal(inv.options[1].payment_uri, `ethereum:${BSC_USDT}@56/transfer?address=${EVM_ADDRESSES[1]}&uint256=40000003000000000000`);
  assert.equal(inv.options[2].payment_uri, `ethereum:${ETH_USDC}@1/transfer?address=${EVM_ADDRESSES[1]}&uint256=40000001`);
  const until = Date.parse(inv.reserved_until);
  assert.deepEqual(
    (await reservationsOf(inv.id)).sort((a, b) => a.network.localeCompare(b.network)),
    [
      { network: 'bsc-mainnet', token_contract: BSC_USDT, address: EVM_ADDRESSES[1], amount: 40_000_003, reserved_until: until },
      { network: 'ethereum-mainnet', token_contract: ETH_USDC, address: EVM_ADDRESSES[1], amount: 40_000_001, reserved_until: until },
      { network: 'tron-mainnet', token_contract: USDT_CONTRACT, address: ADDRESSES[2], amount: 40_000_001, reserved_until: until },
    ],
  );
  const stored = await t.deps.db.selectFrom('invoice_options').selectAll().where('invoice_id', '=', inv.id).orderBy('position').execute();
  assert.deepEqual(
    stored.map((o) => [Number(o.position), o.wallet_id, o.network, o.token, Number(o.adjustment), Number(o.payable_amount), o.status]),
    [
      [1, s.evmWalletId, 'bsc-mainnet', 'USDT', 3, 40_000_003, 'open'],
      [2, s.evmWalletId, 'ethereum-mainnet', 'USDC', 1, 40_000_001, 'open'],
    ],
  );
  // The created event carries the invoice with its options; the list and the console's reads too.
  const created = await t.deps.db
    .selectFrom('events')
    .select('data')
    .where('invoice_id', '=', inv.id)
    .where('type', '=', 'invoice.created')
    .executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(created.data).invoice, inv);
  const list = await s.client.get(`/invoices?merchant_order_id=${encodeURIComponent(inv.merchant_order_id)}`);
  assertDocumented(validator, 'GET', '/api/v1/invoices', list);
  assert.deepEqual(list.body.invoices[0], inv);
  // A next invoice of the same price takes the next amount on each target.
  const next = await createInvoice(s.client, { amount: '40', wallet_id: s.walletId, options });
  assert.deepEqual(
    next.body.invoice.options.map((o: any) => o.payable_amount),
    ['40.000002', '40.000004', '40.000002'],
  );
});

test('concurrent creations with options never give one amount twice on a (network, contract, address)', async () => {
  const shops = [await multichainShop(t, ADDRESSES[3], EVM_ADDRESSES[2]), await multichainShop(t, ADDRESSES[3], EVM_ADDRESSES[2])];
  const keys = await Promise.all(shops.map((s) => newKey(s.client)));
  const api = t.client({ origin: null });
  const options = [
    { network: 'bsc-mainnet', token: 'USDT' },
    { network: 'tron-mainnet', token: 'USDT' },
    { network: 'ethereum-mainnet', token: 'USDT' },
  ];
  const N = 90;
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      createInvoice(
        api,
        { amount: '7.5', wallet_id: shops[i % 2]!.walletId, options: i % 3 === 0 ? options.slice(0, 2) : options },
        { bearer: keys[i % 2]!.secret },
      ),
    ),
  );
  for (const r of results) assert.equal(r.status, 201, r.text);
  const seen = new Set<string>();
  let offered = 0;
  for (const r of results) {
    for (const o of r.body.invoice.options) {
      offered += 1;
      const key = `${o.network} ${o.token_contract} ${o.address} ${o.payable_amount}`;
      assert.ok(!seen.has(key), `${key} given twice`);
      seen.add(key);
    }
  }
  assert.equal(offered, N * 3 - N / 3);
  const ids = results.map((r) => r.body.invoice.id as string);
  const reserved = await t.deps.db.selectFrom('amount_reservations').select(['network', 'amount']).where('invoice_id', 'in', ids).execute();
  assert.equal(reserved.length, offered);
  for (const network of ['bsc-mainnet', 'tron-mainnet', 'ethereum-mainnet']) {
    const amounts = reserved.filter((r) => r.network === network).map((r) => Number(r.amount));
    assert.equal(new Set(amounts).size, amounts.length, network);
  }
});

test('refusals: 400 validation_error naming what is allowed, and nothing written', async () => {
  const s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
  const tronOnly = await shop(t, ADDRESSES[1]);
  const cases: Array<[string, Shop, Record<string, unknown>, { path: string; message: RegExp }]> = [
    [
      'a network this instance does not watch',
      s,
      { network: 'polygon-mainnet' },
      { path: 'network', message: /polygon-mainnet is not enabled on this instance; use one of tron-mainnet, bsc-mainnet, ethereum-mainnet, base-mainnet/ },
    ],
    [
      'an option on such a network',
      s,
      {
        options: [
          { network: 'tron-mainnet', token: 'USDT' },
          { network: 'arbitrum-mainnet', token: 'USDT' },
        ],
      },
      { path: 'options.1.network', message: /arbitrum-mainnet is not enabled/ },
    ],
    ['no such network', s, { network: 'bsc' }, { path: 'network', message: /bsc-mainnet/ }],
    ['a token the network does not have', s, { network: 'base-mainnet', token: 'USDT' }, { path: 'token', message: /^base-mainnet has USDC only, not USDT$/ }],
    ['USDC on TRON', s, { network: 'tron-mainnet', token: 'USDC' }, { path: 'token', message: /^tron-mainnet has USDT only, not USDC$/ }],
    [
      "USDC on the wallet's TRON network",
      s,
      { token: 'USDC' },
      { path: 'token', message: /^the wallet's first network: tron-mainnet has USDT only, not USDC$/ },
    ],
    [
      'an option whose token its network lacks',
      s,
      { options: [{ network: 'base-mainnet', token: 'USDT' }] },
      { path: 'options.0.token', message: /base-mainnet has USDC only/ },
    ],
    ['no such token', s, { network: 'bsc-mainnet', token: 'DAI' }, { path: 'token', message: /USDT/ }],
    [
      'one option twice',
      s,
      {
        options: [
          { network: 'bsc-mainnet', token: 'USDT' },
          { network: 'bsc-mainnet', token: 'USDT' },
        ],
      },
      { path: 'options.1', message: /offered twice/ },
    ],
    ['no option', s, { options: [] }, { path: 'options', message: /.+/ }],
    ['nine options', s, { options: Array.from({ length: 9 }, () => ({ network: 'bsc-mainnet', token: 'USDT' })) }, { path: 'options', message: /.+/ }],
    ['an option without its token', s, { options: [{ network: 'bsc-mainnet' }] }, { path: 'options.0.token', message: /.+/ }],
    [
      'an option with an unknown field',
      s,
      { options: [{ network: 'bsc-mainnet', token: 'USDT', wallet_id: 'x' }] },
      { path: 'options.0.wallet_id', message: /unknown field/ },
    ],
    [
      'network other than options[0]',
      s,
      { network: 'tron-mainnet', options: [{ network: 'bsc-mainnet', token: 'USDT' }] },
      { path: 'network', message: /options\[0\]\.network \(bsc-mainnet\)/ },
    ],
    [
      'token other than options[0]',
      s,
      { token: 'USDC', options: [{ network: 'bsc-mainnet', token: 'USDT' }] },
      { path: 'token', message: /options\[0\]\.token \(USDT\)/ },
    ],
    [
      'a network none of the wallets receives on',
      tronOnly,
      { network: 'bsc-mainnet' },
      { path: 'network', message: /none of your wallets receives on bsc-mainnet/ },
    ],
    [
      'an option none of the wallets receives on',
      tronOnly,
      {
        options: [
          { network: 'tron-mainnet', token: 'USDT' },
          { network: 'ethereum-mainnet', token: 'USDC' },
        ],
      },
      { path: 'options.1.network', message: /none of your wallets receives on ethereum-mainnet/ },
    ],
  ];
  const before = await written();
  for (const [what, who, body, expected] of cases) {
    const res = await createInvoice(who.client, { amount: '5', wallet_id: who.walletId, ...body });
    assert.equal(res.status, 400, `${what}: ${res.text}`);
    assertDocumented(validator, 'POST', '/api/v1/invoices', res);
    assert.equal(res.body.error.code, 'validation_error', what);
    const detail = (res.body.error.details as Array<{ path: string; message: string }>).find((d) => d.path === expected.path);
    assert.ok(detail, `${what}: ${JSON.stringify(res.body.error.details)}`);
    assert.match(detail.message, expected.message, what);
  }
  assert.deepEqual(await written(), before);
});

test('replay: the same body answers the stored invoice and its options; other options with the key are the existing conflict', async () => {
  const s = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[2]);
  const body = {
    merchant_order_id: 'opt-replay',
    amount: '3',
    wallet_id: s.walletId,
    options: [
      { network: 'tron-mainnet', token: 'USDT' },
      { network: 'base-mainnet', token: 'USDC' },
    ],
  };
  const first = await createInvoice(s.client, body, { key: 'opt-key' });
  assert.equal(first.status, 201, first.text);
  const again = await createInvoice(s.client, { ...body, network: 'tron-mainnet', token: 'USDT' }, { key: 'opt-key' });
  assert.equal(again.status, 200, again.text);
  assertDocumented(validator, 'POST', '/api/v1/invoices', again);
  assert.equal(again.body.idempotent_replay, true);
  assert.deepEqual(again.body.invoice, first.body.invoice);
  const other = await createInvoice(
    s.client,
    {
      ...body,
      options: [
        { network: 'tron-mainnet', token: 'USDT' },
        { network: 'bsc-mainnet', token: 'USDC' },
      ],
    },
    { key: 'opt-key' },
  );
  assert.equal(other.status, 409);
  assert.equal(other.body.error.code, 'idempotency_key_reused');
  const fewer = await createInvoice(s.client, { ...body, options: body.options.slice(0, 1) }, { key: 'opt-key' });
  assert.equal(fewer.body.error.code, 'idempotency_key_reused');
  // `network` alone, with its default token, and as the one option are one request.
  const single = { merchant_order_id: 'opt-replay-2', amount: '3', wallet_id: s.walletId, network: 'base-mainnet' };
  assert.equal((await createInvoice(s.client, single, { key: 'opt-key-2' })).status, 201);
  assert.equal((await createInvoice(s.client, { ...single, token: 'USDC' }, { key: 'opt-key-2' })).status, 200);
  assert.equal(
    (await createInvoice(s.client, { ...single, network: undefined, options: [{ network: 'base-mainnet', token: 'USDC' }] }, { key: 'opt-key-2' })).status,
    200,
  );
  // An invoice asked without any network fingerprints as it did before there were several.
  const plain = { merchant_order_id: 'opt-replay-3', amount: '3', wallet_id: s.walletId };
  assert.equal((await createInvoice(s.client, plain, { key: 'opt-key-3' })).status, 201);
  assert.equal((await createInvoice(s.client, { ...plain, network: 'tron-mainnet' }, { key: 'opt-key-3' })).body.error.code, 'idempotency_key_reused');
});
