/**
 * Solana and TON wallets through the real server on a migrated database: a Solana owner address is
 * taken and answered with the token account (ATA) of each token; a mint, an ATA or another family's
 * address is refused saying what it is. A TON address is taken in any printed form and stored raw,
 * once per account whatever form it comes in; a testnet-flagged form only on a test network. The
 * console shows the token accounts and the form wallets print.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES } from '../helpers/shop.js';
import { associatedTokenAddress } from '../../src/chains/solana/address.js';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import { listNetworkAddresses } from '../../src/wallets/wallets.repo.js';

// An owner and its USDC token account as recorded on chain (test/chains/solana/address.test.ts).
const OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const OWNER_USDC_ATA = 'F77xG4vz2CJeMxxAmFW8pvPx2c5Uk75pksr6Wwx6HFhV';
const SECOND_OWNER = 'FQT9SSwEZ6UUQxsmTzgt5JzjrS4M5zm13M1QiYF8TEo6';
const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const TON_RAW = '0:237e5119ffa2a028cc4f95c9ca37566852f1dd4d3ea15704d6f791065507de4a';
const TON_OTHER = '0:a1a2dca202d48faacd016cf0fce75332b3dfcb74c54cecdf9ab6c158bd431ce3';

const PROVIDER = [{ url: 'http://127.0.0.1:9/' }];
const TON_PROVIDER = [{ url: 'http://127.0.0.1:9/', kind: 'toncenter' }];

let t: TestApp;
let test_: TestApp;
before(async () => {
  t = await startTestApp({
    config: {
      evm: { networks: [{ id: 'base-mainnet', providers: PROVIDER }] },
      solana: { networks: [{ id: 'solana-mainnet', providers: PROVIDER }] },
      ton: { networks: [{ id: 'ton-mainnet', providers: TON_PROVIDER }] },
    },
  });
  test_ = await startTestApp({
    config: {
      tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' },
      solana: { networks: [{ id: 'solana-devnet', providers: PROVIDER }] },
      ton: { networks: [{ id: 'ton-devnet', providers: TON_PROVIDER }] },
    },
  });
});
after(async () => {
  await t.close();
  await test_.close();
});

test('a Solana owner address: registered on the Solana network, answered with the token account of each token', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.post('/wallets', { label: 'Phantom', address: OWNER });
  assert.equal(res.status, 201, res.text);
  const w = res.body.wallet;
  assert.equal(w.address, OWNER);
  assert.deepEqual(w.networks, ['solana-mainnet']);
  assert.deepEqual(w.token_accounts, [
    { network: 'solana-mainnet', token: 'USDT', address: associatedTokenAddress(OWNER, USDT_MINT) },
    { network: 'solana-mainnet', token: 'USDC', address: OWNER_USDC_ATA },
  ]);
  assert.ok((await listNetworkAddresses(t.deps.db, 'solana-mainnet')).includes(OWNER));
  // GET /wallets says the same; a wallet of another family carries no token accounts.
  await client.post('/wallets', { label: 'TRON', address: ADDRESSES[0] });
  const list = (await client.get('/wallets')).body.wallets;
  assert.deepEqual(list.find((x: any) => x.id === w.id).token_accounts, w.token_accounts);
  assert.equal('token_accounts' in list.find((x: any) => x.address === ADDRESSES[0]), false);
  // The console shows the owner and both token accounts.
  const page = await client.get(`${t.baseUrl}/console/wallets`, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  const text = page.text.replace(/<[^>]+>/g, '');
  for (const a of [OWNER, OWNER_USDC_ATA]) assert.ok(text.replace(/\s+/g, '').includes(a), a);
  assert.match(text, /USDC token account on Solana \(SPL\)/);
});

test('a TON address in any form is one wallet, stored raw; the console shows it as wallets print it', async () => {
  const { client } = await signedInMerchant(t);
  const forms = [
    toFriendlyAddress(TON_RAW, { bounceable: false }),
    toFriendlyAddress(TON_RAW, { bounceable: true }),
    toFriendlyAddress(TON_RAW, { bounceable: false, urlSafe: false }),
    TON_RAW.toUpperCase().replace('0X', '0x'),
    TON_RAW,
  ];
  const first = await client.post('/wallets', { label: 'Tonkeeper', address: forms[0] });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.wallet.address, TON_RAW);
  assert.deepEqual(first.body.wallet.networks, ['ton-mainnet']);
  assert.equal('token_accounts' in first.body.wallet, false);
  for (const form of forms.slice(1)) {
    const again = await client.post('/wallets', { label: 'Again', address: form });
    assert.equal(again.status, 200, `${form}: ${again.text}`);
    assert.equal(again.body.wallet.id, first.body.wallet.id, form);
  }
  assert.ok((await listNetworkAddresses(t.deps.db, 'ton-mainnet')).includes(TON_RAW));
  const page = (await client.get(`${t.baseUrl}/console/wallets`, { headers: { accept: 'text/html' } })).text.replace(/<[^>]+>/g, '').replace(/\s+/g, '');
  assert.ok(page.includes(forms[0]!), 'the UQ form');
});

test('refused with 400 validation_error naming the fault, nothing written: a mint, an ATA, a testnet TON form, the wrong family', async () => {
  const { client } = await signedInMerchant(t);
  const testnetForm = toFriendlyAddress(TON_OTHER, { bounceable: false, testOnly: true });
  const badChecksum = toFriendlyAddress(TON_OTHER, { bounceable: false }).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ address: USDT_MINT }, 'address', /^this is the USDT mint of solana-mainnet, not a wallet/],
    [{ address: USDC_MINT }, 'address', /USDC mint of solana-mainnet/],
    [{ address: OWNER_USDC_ATA }, 'address', /token account or program address, not a wallet/],
    [{ address: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' }, 'address', /SPL Token program/],
    [{ address: testnetForm }, 'address', /flagged for the TON testnet/],
    [{ address: badChecksum }, 'address', /checksum/],
    [{ address: OWNER, networks: ['ton-mainnet'] }, 'networks.0', /^a Solana address cannot receive on ton-mainnet$/],
    [{ address: OWNER, networks: ['base-mainnet'] }, 'networks.0', /^a Solana address cannot receive on base-mainnet$/],
    [{ address: TON_OTHER, networks: ['solana-mainnet'] }, 'networks.0', /^a TON address cannot receive on solana-mainnet$/],
    [{ address: TON_OTHER, networks: ['tron-mainnet'] }, 'networks.0', /^a TON address cannot receive on tron-mainnet$/],
    [{ address: ADDRESSES[1], networks: ['solana-mainnet'] }, 'networks.0', /^a TRON address cannot receive on solana-mainnet$/],
    [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', networks: ['ton-mainnet'] }, 'networks.0', /^an EVM address cannot receive on ton-mainnet$/],
    [{ address: SECOND_OWNER, networks: ['solana-devnet'] }, 'networks.0', /^solana-devnet is not enabled on this instance/],
  ];
  const before = (await client.get('/wallets')).body.wallets.length;
  for (const [body, path, message] of cases) {
    const res = await client.post('/wallets', { label: 'Refused', ...body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error', JSON.stringify(body));
    const detail = res.body.error.details.find((d: any) => d.path === path);
    assert.ok(detail, `${JSON.stringify(body)}: ${JSON.stringify(res.body.error.details)}`);
    assert.match(detail.message, message, JSON.stringify(body));
  }
  assert.equal((await client.get('/wallets')).body.wallets.length, before, 'nothing was written');
  // PATCH: a Solana wallet cannot move to TON, nor a TON wallet to Solana.
  const sol = (await client.post('/wallets', { label: 'S', address: SECOND_OWNER })).body.wallet.id;
  const ton = (await client.post('/wallets', { label: 'T', address: TON_OTHER })).body.wallet.id;
  for (const [id, networks, message] of [
    [sol, ['ton-mainnet'], /: a Solana address cannot receive on ton-mainnet$/],
    [ton, ['ton-mainnet', 'solana-mainnet'], /: a TON address cannot receive on solana-mainnet$/],
  ] as const) {
    const res = await client.patch(`/wallets/${id}`, { networks });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, message);
  }
});

test('a test network takes the testnet-flagged TON form; the served document lists every family enabled', async () => {
  const { client } = await signedInMerchant(test_);
  const res = await client.post('/wallets', { label: 'Testnet', address: toFriendlyAddress(TON_OTHER, { bounceable: false, testOnly: true }) });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual([res.body.wallet.address, res.body.wallet.networks], [TON_OTHER, ['ton-devnet']]);
  const sol = await client.post('/wallets', { label: 'Devnet', address: SECOND_OWNER });
  assert.equal(sol.status, 201, sol.text);
  const mints = test_.config.networks.find((n) => n.id === 'solana-devnet')!.tokens;
  assert.deepEqual(
    sol.body.wallet.token_accounts.map((a: any) => a.address),
    mints.map((m) => associatedTokenAddress(SECOND_OWNER, m.contract)),
  );
  // The devnet's own mint is refused as an owner too.
  const mint = await client.post('/wallets', { label: 'Mint', address: mints[0]!.contract });
  assert.match(mint.body.error.message, /USDT mint of solana-devnet/);
  const doc = (await t.client().get('/openapi.json')).body.components.schemas.CreateWallet;
  assert.deepEqual(
    doc.allOf.map((r: any) => r.then.properties.networks.items.enum),
    [['tron-mainnet'], ['base-mainnet'], ['solana-mainnet'], ['ton-mainnet']],
  );
  for (const address of [OWNER, TON_RAW, toFriendlyAddress(TON_RAW, { bounceable: false }), ADDRESSES[0]]) {
    assert.match(address, new RegExp(doc.properties.address.pattern, 'u'), address);
    // One family's rule, and only one, applies to each address.
    assert.equal(doc.allOf.filter((r: any) => new RegExp(r.if.properties.address.pattern, 'u').test(address)).length, 1, address);
  }
});
