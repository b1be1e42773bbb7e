/**
 * Recorded real TON index answers (test/fixtures/ton/, each citing its source) through the TON code:
 * toncenter's jetton/transfers answer of two mainnet USDT transfers replayed to the toncenter reader
 * from a loopback server (the traces beside it are the replay's own, since the recording has none, and
 * say what a receipt at the owner's jetton wallet looks like); real jetton wallets re-derived from
 * their owners (toncenter's source_wallet, tonapi's senders_wallet and recipients_wallet); real aborted
 * transactions refused, a real successful one accepted; a real testnet answer refused on mainnet and its
 * testnet jetton not taken for USDT.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { NETWORKS } from '../../../src/chains/networks.js';
import { canonicalTonAddress } from '../../../src/chains/ton/address.js';
import { jettonWalletAddress } from '../../../src/chains/ton/jetton.js';
import { TonReadRefused } from '../../../src/chains/ton/reader.js';
import { TonHttpClient } from '../../../src/chains/ton/rpc.js';
import { ToncenterReader, transactionSucceeded } from '../../../src/chains/ton/toncenter.js';
import { systemClock } from '../../../src/lib/clock.js';
import { internalTransferBody } from './index-server.js';

const FIXTURES = resolve(import.meta.dirname, '../../../../test/fixtures/ton');
const load = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const network = NETWORKS['ton-mainnet'];
const USDT = network.tokens[0]!.contract;

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/** A loopback toncenter answering `answers[path]` (a function of the query) and 404 elsewhere. */
async function toncenter(answers: Record<string, (q: URLSearchParams) => unknown>) {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const answer = answers[url.pathname];
    res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer ? answer(url.searchParams) : { error: 'not found' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  const client = new TonHttpClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clock: systemClock, requestsPerSecond: 1000 });
  return new ToncenterReader({ network, client });
}

test('every recorded answer cites its source', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 4);
  for (const f of files) assert.match(load(f).source, /github\.com\/[^ ]+ @ [0-9a-f]{40}/, f);
});

test("toncenter's recorded USDT transfers are read with their exact amounts, once the receipts at the owner's jetton wallet are shown", async () => {
  const recorded = load('toncenter-jetton-transfers-usdt-mainnet.json').answer;
  const HEAD = 37_000_000;
  const block = (seqno: number) => ({
    seqno,
    root_hash: Buffer.alloc(32, seqno % 251).toString('base64'),
    gen_utime: String(1_716_867_000 + seqno - HEAD),
    start_lt: '46760000000000',
    end_lt: '46760000000000',
    global_id: -239,
  });
  const traceOf = async (row: any, i: number) => {
    const destWallet = await jettonWalletAddress(USDT, row.destination);
    const msgHash = createHash('sha256').update(`message ${i}`).digest('base64');
    const body = internalTransferBody({ amount: BigInt(row.amount), sourceOwner: canonicalTonAddress(row.source)!, comment: undefined }).toString('base64');
    const ok = { type: 'ord', aborted: false, compute_ph: { skipped: false, success: true } };
    const dest = {
      account: destWallet.toUpperCase(),
      hash: createHash('sha256').update(`receipt ${i}`).digest('base64'),
      now: row.transaction_now + 4,
      mc_block_seqno: HEAD - 10 + i,
      description: ok,
      block_ref: { workchain: 0, shard: '8000000000000000', seqno: 44_000_000 + i },
      in_msg: { hash: msgHash, source: row.source_wallet, opcode: '0x178d4519', bounced: false, message_content: { body } },
      out_msgs: [],
    };
    const source = {
      account: row.source_wallet,
      hash: row.transaction_hash,
      mc_block_seqno: HEAD - 11 + i,
      description: ok,
      out_msgs: [{ hash: msgHash, destination: destWallet.toUpperCase(), opcode: '0x178d4519' }],
    };
    return { trace_id: null, transactions: { [source.hash]: source, [dest.hash]: dest } };
  };
  const traces = await Promise.all(recorded.jetton_transfers.map(traceOf));
  const reader = await toncenter({
    '/api/v3/masterchainInfo': () => ({ last: block(HEAD) }),
    '/api/v3/blocks': (q) => ({ blocks: [block(Number(q.get('seqno')))] }),
    '/api/v3/jetton/transfers': () => recorded,
    '/api/v3/traces': (q) => ({ traces: traces.filter((t) => Object.keys(t.transactions).some((h) => q.getAll('tx_hash').includes(h))) }),
  });
  await reader.checkNetwork();
  const head = await reader.finalHead();
  const owner = canonicalTonAddress(recorded.jetton_transfers[0].destination)!;
  const read = await reader.readTransfers({ from: BigInt(HEAD - 100), to: head.number, recipients: [owner], finalAtOrBelow: head.number });
  assert.equal(read.complete, true);
  assert.deepEqual(read.dropped, []);
  assert.deepEqual(
    read.transfers.map((t) => [t.from, t.to, t.contract, String(t.raw), t.amount.exact ? String(t.amount.micros) : 'inexact', t.finality]),
    [
      ['0:1f5806c73d03bbc96eb7eebf16067f1f2e8e270cfa16d57001aa9eaf7456f008', owner, USDT, '17000000', '17000000', 'final'],
      ['0:1f5806c73d03bbc96eb7eebf16067f1f2e8e270cfa16d57001aa9eaf7456f008', owner, USDT, '10000000', '10000000', 'final'],
    ],
  );
});

test('real jetton wallets are re-derived from their owners: toncenter’s source_wallet, tonapi’s senders_wallet and recipients_wallet', async () => {
  const row = load('toncenter-jetton-transfers-usdt-mainnet.json').answer.jetton_transfers[0];
  assert.equal(await jettonWalletAddress(row.jetton_master, row.source), canonicalTonAddress(row.source_wallet));
  const action = load('tonapi-jetton-transfer-usdt-mainnet.json').action.JettonTransfer;
  assert.equal(canonicalTonAddress(action.jetton.address), USDT);
  assert.equal(await jettonWalletAddress(USDT, action.sender.address), action.senders_wallet);
  assert.equal(await jettonWalletAddress(USDT, action.recipient.address), action.recipients_wallet);
});

test('real aborted transactions (compute skipped: no_gas, no_state) are refused; a real successful one is accepted', () => {
  const aborted = load('toncenter-transactions-aborted-testnet.json').answer.transactions;
  assert.equal(aborted.length, 2);
  for (const tx of aborted) assert.equal(transactionSucceeded(tx), false, tx.hash);
  // The first is an owner's wallet refusing a transfer_notification: the jetton itself had already
  // arrived at its jetton wallet, which is why a receipt is judged at the jetton wallet, never here.
  assert.equal(aborted[0].in_msg.opcode, '0x7362d09c');
  const ok = load('toncenter-testnet-jetton-transfer.json').transactions.transactions[0];
  assert.equal(transactionSucceeded(ok), true);
});

test('a real testnet answer is refused on mainnet, and its testnet jetton is no USDT', async () => {
  const fx = load('toncenter-testnet-jetton-transfer.json');
  const reader = await toncenter({
    '/api/v3/masterchainInfo': () => fx.masterchainInfo,
    // The window's start block: the recorded head renumbered (the reader checks it got the block it asked for).
    '/api/v3/blocks': (q) => ({ blocks: [{ ...fx.masterchainInfo.last, seqno: Number(q.get('seqno')) }] }),
    '/api/v3/jetton/transfers': () => fx.jetton_transfers,
    '/api/v3/traces': () => ({ traces: [] }),
  });
  await assert.rejects(reader.checkNetwork(), (e: unknown) => e instanceof TonReadRefused && e.reason === 'wrong_chain' && /global id -3/.test(e.message));
  const head = await reader.finalHead();
  assert.equal(head.number, 21_082_664n);
  const to = fx.jetton_transfers.jetton_transfers[0].destination;
  const read = await reader.readTransfers({ from: head.number, to: head.number, recipients: [to], finalAtOrBelow: head.number });
  assert.deepEqual(read.transfers, []);
  assert.deepEqual(
    read.dropped.map((d) => d.reason),
    ['other_contract'],
  );
});
