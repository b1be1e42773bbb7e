/**
 * Wallets on several networks, through the real server on a migrated database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL): an EVM address is stored in EIP-55 form and receives on the
 * EVM networks the merchant names (by default every one the instance enabled); another family's
 * network, a network the instance has not enabled, an empty or repeated list are refused and
 * nothing is written; PATCH changes the networks, and keeps one an invoice still waits on.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES } from '../helpers/shop.js';
import { insertInvoice } from '../pages/rows.js';
import { listNetworkAddresses } from '../../src/wallets/wallets.repo.js';

// EIP-55's own test vectors, and one all-lower-case address.
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const SECOND = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const THIRD = '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB';
const FOURTH = '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb';
/** CHECKSUMMED with one letter's case flipped. */
const BAD_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';

const PROVIDER = [{ url: 'http://127.0.0.1:9/' }];
const EVM_CONFIG = {
  evm: {
    networks: [
      { id: 'bsc-mainnet', providers: PROVIDER },
      { id: 'ethereum-mainnet', providers: PROVIDER },
      { id: 'base-mainnet', providers: PROVIDER },
    ],
  },
};

let t: TestApp;
let tronOnly: TestApp;
before(async () => {
  t = await startTestApp({ config: EVM_CONFIG });
  tronOnly = await startTestApp();
});
after(async () => {
  await t.close();
  await tronOnly.close();
});

async function counts(app: TestApp) {
  const wallets = await app.deps.db
    .selectFrom('wallets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const networks = await app.deps.db
    .selectFrom('wallet_networks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { wallets: Number(wallets.n), networks: Number(networks.n) };
}

test('an EVM address: lower case stored in EIP-55 form, on every enabled EVM network by default, TRON first never', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.post('/wallets', { label: 'EVM', address: CHECKSUMMED.toLowerCase() });
  assert.equal(res.status, 201, res.text);
  const w = res.body.wallet;
  assert.equal(w.address, CHECKSUMMED);
  // Its own network (the first EVM network of the configuration) first, then the others by name.
  assert.deepEqual(w.networks, ['bsc-mainnet', 'base-mainnet', 'ethereum-mainnet']);
  assert.equal(w.network, 'bsc-mainnet');
  // Stored as answered: the watchers find the checksummed address on each network.
  for (const network of ['bsc-mainnet', 'ethereum-mainnet', 'base-mainnet'])
    assert.ok((await listNetworkAddresses(t.deps.db, network)).includes(CHECKSUMMED), network);
  assert.ok(!(await listNetworkAddresses(t.deps.db, 'tron-mainnet')).includes(CHECKSUMMED));
  // All upper case is the same address: the same wallet comes back.
  const upper = await client.post('/wallets', { label: 'Again', address: `0x${CHECKSUMMED.slice(2).toUpperCase()}` });
  assert.equal(upper.status, 200);
  assert.equal(upper.body.wallet.id, w.id);
  assert.equal(upper.body.wallet.label, 'EVM');
});

test('a TRON address keeps its one TRON network; the response and GET /wallets carry networks, own network first', async () => {
  const { client } = await signedInMerchant(t);
  const tron = await client.post('/wallets', { label: 'TRON', address: ADDRESSES[0] });
  assert.equal(tron.status, 201);
  assert.deepEqual([tron.body.wallet.network, tron.body.wallet.networks], ['tron-mainnet', ['tron-mainnet']]);
  t.clock.advance(1000);
  const named = await client.post('/wallets', { label: 'Named', address: ADDRESSES[1], networks: ['tron-mainnet'] });
  assert.equal(named.status, 201);
  t.clock.advance(1000);
  const evm = await client.post('/wallets', { label: 'Two', address: SECOND, networks: ['ethereum-mainnet', 'base-mainnet'] });
  assert.equal(evm.status, 201);
  assert.deepEqual([evm.body.wallet.network, evm.body.wallet.networks], ['ethereum-mainnet', ['ethereum-mainnet', 'base-mainnet']]);
  const list = await client.get('/wallets');
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.wallets.map((w: any) => [w.label, w.network, w.networks]),
    [
      ['Two', 'ethereum-mainnet', ['ethereum-mainnet', 'base-mainnet']],
      ['Named', 'tron-mainnet', ['tron-mainnet']],
      ['TRON', 'tron-mainnet', ['tron-mainnet']],
    ],
  );
  // The same address with other networks: its wallet as it is (change networks with PATCH).
  const again = await client.post('/wallets', { label: 'Other', address: SECOND.toLowerCase(), networks: ['bsc-mainnet'] });
  assert.equal(again.status, 200);
  assert.deepEqual([again.body.wallet.id, again.body.wallet.networks], [evm.body.wallet.id, ['ethereum-mainnet', 'base-mainnet']]);
});

test('refused with 400 validation_error, nothing written: a bad checksum, the other family, a network not enabled, none, repeats', async () => {
  const { client } = await signedInMerchant(t);
  const before = await counts(t);
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ address: BAD_CHECKSUM }, 'address', /checksum \(EIP-55 letter case\) is wrong.*expected 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed/],
    [{ address: BAD_CHECKSUM, networks: ['ethereum-mainnet'] }, 'address', /checksum/],
    [{ address: ADDRESSES[2], networks: ['bsc-mainnet'] }, 'networks.0', /^a TRON address cannot receive on bsc-mainnet$/],
    [{ address: THIRD, networks: ['ethereum-mainnet', 'tron-mainnet'] }, 'networks.1', /^an EVM address cannot receive on tron-mainnet$/],
    [
      { address: THIRD, networks: ['polygon-mainnet'] },
      'networks.0',
      /^polygon-mainnet is not enabled on this instance; it receives on tron-mainnet, bsc-mainnet, ethereum-mainnet, base-mainnet$/,
    ],
    [{ address: THIRD, networks: ['bsc-devnet'] }, 'networks.0', /not enabled on this instance/],
    [{ address: ADDRESSES[2], networks: ['tron-nile'] }, 'networks.0', /^tron-nile is not enabled/],
    [{ address: THIRD, networks: ['solana-mainnet'] }, 'networks.0', /./],
    [{ address: THIRD, networks: [] }, 'networks', /at least one network/],
    [{ address: THIRD, networks: ['bsc-mainnet', 'bsc-mainnet'] }, 'networks', /each network once/],
    [{ address: THIRD, networks: 'bsc-mainnet' }, 'networks', /./],
    [{ address: `${THIRD} ` }, 'address', /TRON address .* or an EVM address/],
    [{ address: THIRD.slice(0, 41) }, 'address', /./],
  ];
  for (const [body, path, message] of cases) {
    const res = await client.post('/wallets', { label: 'Refused', ...body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error', JSON.stringify(body));
    const detail = res.body.error.details.find((d: any) => d.path === path);
    assert.ok(detail, `${JSON.stringify(body)}: ${JSON.stringify(res.body.error.details)}`);
    assert.match(detail.message, message, JSON.stringify(body));
  }
  // The message of a single refusal says it at the top too.
  const top = await client.post('/wallets', { label: 'Refused', address: ADDRESSES[2], networks: ['bsc-mainnet'] });
  assert.equal(top.body.error.message, 'The request is not valid: a TRON address cannot receive on bsc-mainnet');
  assert.deepEqual(await counts(t), before, 'nothing was written');
  assert.deepEqual((await client.get('/wallets')).body.wallets, []);
});

test('an instance without EVM networks takes no EVM address, however it is written', async () => {
  const { client } = await signedInMerchant(tronOnly);
  const before = await counts(tronOnly);
  for (const body of [{ address: CHECKSUMMED }, { address: CHECKSUMMED.toLowerCase(), networks: ['bsc-mainnet'] }]) {
    const res = await client.post('/wallets', { label: 'EVM', ...body });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_error');
    assert.match(
      JSON.stringify(res.body.error.details),
      /an EVM address cannot receive on this instance, which receives on tron-mainnet|bsc-mainnet is not enabled/,
    );
  }
  assert.deepEqual(await counts(tronOnly), before);
  // Its served document says the same: TRON addresses only, its one network.
  const doc = (await tronOnly.client().get('/openapi.json')).body;
  const schema = doc.components.schemas.CreateWallet;
  assert.equal(schema.properties.address.pattern, '^(?:T[1-9A-HJ-NP-Za-km-z]{33})$');
  assert.deepEqual(schema.properties.networks.items.enum, ['tron-mainnet']);
  const evmDoc = (await t.client().get('/openapi.json')).body.components.schemas.CreateWallet;
  assert.deepEqual(evmDoc.properties.networks.items.enum, ['tron-mainnet', 'bsc-mainnet', 'ethereum-mainnet', 'base-mainnet']);
  assert.deepEqual(
    evmDoc.allOf.map((r: any) => [r.if.properties.address.pattern, r.then.properties.networks.items.enum]),
    [
      ['^T[1-9A-HJ-NP-Za-km-z]{33}$', ['tron-mainnet']],
      ['^0x[0-9a-fA-F]{40}$', ['bsc-mainnet', 'ethereum-mainnet', 'base-mainnet']],
    ],
  );
});

test('PATCH networks: replaced (the first becomes its own), the same checks, another merchant 404, nothing changed on a refusal', async () => {
  const { client } = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  const created = await client.post('/wallets', { label: 'Multi', address: FOURTH });
  const id = created.body.wallet.id;
  const moved = await client.patch(`/wallets/${id}`, { networks: ['base-mainnet', 'bsc-mainnet'] });
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual([moved.body.wallet.network, moved.body.wallet.networks], ['base-mainnet', ['base-mainnet', 'bsc-mainnet']]);
  assert.ok(!(await listNetworkAddresses(t.deps.db, 'ethereum-mainnet')).includes(FOURTH), 'no longer watched on Ethereum');
  assert.deepEqual((await client.get('/wallets')).body.wallets.find((w: any) => w.id === id).networks, ['base-mainnet', 'bsc-mainnet']);
  // With a label in the same request: both change.
  const both = await client.patch(`/wallets/${id}`, { label: 'Renamed', networks: ['ethereum-mainnet'] });
  assert.deepEqual([both.body.wallet.label, both.body.wallet.networks], ['Renamed', ['ethereum-mainnet']]);

  t.clock.advance(1000);
  const tron = (await client.post('/wallets', { label: 'T', address: ADDRESSES[3] })).body.wallet.id;
  const before = await counts(t);
  for (const [wallet, networks, path, message] of [
    [id, ['tron-mainnet'], 'networks.0', /^an EVM address cannot receive on tron-mainnet$/],
    [tron, ['tron-mainnet', 'bsc-mainnet'], 'networks.1', /^a TRON address cannot receive on bsc-mainnet$/],
    [id, ['arbitrum-mainnet'], 'networks.0', /not enabled on this instance/],
    [id, [], 'networks', /at least one/],
    [id, ['bsc-mainnet', 'base-mainnet', 'bsc-mainnet'], 'networks', /once/],
  ] as const) {
    const res = await client.patch(`/wallets/${wallet}`, { label: 'Not this', networks });
    assert.equal(res.status, 400, JSON.stringify(networks));
    assert.equal(res.body.error.code, 'validation_error');
    assert.match(res.body.error.details.find((d: any) => d.path === path)?.message ?? '', message, JSON.stringify(res.body.error));
  }
  assert.deepEqual(await counts(t), before);
  const still = (await client.get('/wallets')).body.wallets;
  assert.deepEqual(
    still.map((w: any) => [w.label, w.networks]),
    [
      ['T', ['tron-mainnet']],
      ['Renamed', ['ethereum-mainnet']],
    ],
  );
  const foreign = await other.client.patch(`/wallets/${id}`, { networks: ['bsc-mainnet'] });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.error.code, 'not_found');
});

test('PATCH keeps a network an invoice of the wallet still waits on: 409 wallet_network_in_use, nothing changed; free once it is paid', async () => {
  const owner = await signedInMerchant(t);
  const created = await owner.client.post('/wallets', { label: 'Busy', address: THIRD, networks: ['bsc-mainnet', 'ethereum-mainnet'] });
  assert.equal(created.status, 201);
  const walletId = created.body.wallet.id;
  const invoice = await insertInvoice(t.deps.db, { merchantId: owner.merchant.id, walletId, now: t.clock.now() });
  await t.deps.db
    .updateTable('invoices')
    .set({ network: 'ethereum-mainnet', token_contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', wallet_address: THIRD })
    .where('id', '=', invoice.id)
    .execute();
  const refused = await owner.client.patch(`/wallets/${walletId}`, { label: 'Busy too', networks: ['bsc-mainnet'] });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.body.error.code, 'wallet_network_in_use');
  assert.match(refused.body.error.message, /ethereum-mainnet/);
  const kept = (await owner.client.get('/wallets')).body.wallets[0];
  assert.deepEqual([kept.label, kept.networks], ['Busy', ['bsc-mainnet', 'ethereum-mainnet']]);
  // Keeping it (and dropping another) is fine.
  const reordered = await owner.client.patch(`/wallets/${walletId}`, { networks: ['ethereum-mainnet'] });
  assert.equal(reordered.status, 200);
  assert.deepEqual(reordered.body.wallet.networks, ['ethereum-mainnet']);
  await t.deps.db.updateTable('invoices').set({ status: 'expired' }).where('id', '=', invoice.id).execute();
  const freed = await owner.client.patch(`/wallets/${walletId}`, { networks: ['bsc-mainnet'] });
  assert.equal(freed.status, 200);
  assert.deepEqual(freed.body.wallet.networks, ['bsc-mainnet']);
});
