/**
 * What watching TON costs, measured on the loopback index (index-server.ts) rather than estimated:
 * requests per steady poll of the toncenter reader (the head, then jetton/transfers for every owner)
 * and per sweep of the tonapi reader (the head, bulk account states, then only the wallets that
 * moved), at 1, 100 and 1,000 watched owners, and what a day of them comes to at the cadence
 * docs/payments.md ("TON") describes: toncenter every 12 s and tonapi every 5 minutes while invoices
 * are open, plus per payment one traces request and three tonapi requests. With an owner list
 * the provider takes whole (toncenter's documented 1,000), 1,000 owners stay under 20,000 a day; a
 * provider whose URLs stop at 16 KB (this server's default, like many proxies) is learned down to
 * 250 owners a request, and the figure says what that costs.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { NETWORKS } from '../../../src/chains/networks.js';
import { TonHttpClient } from '../../../src/chains/ton/rpc.js';
import { TonapiReader } from '../../../src/chains/ton/tonapi.js';
import { ToncenterReader } from '../../../src/chains/ton/toncenter.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { startIndexServer, TonChainModel } from './index-server.js';

const network = NETWORKS['ton-mainnet'];
const owner = (i: number) => `0:${createHash('sha256').update(`owner ${i}`).digest('hex')}`;
const DAY_S = 86_400;
const TONCENTER_EVERY_S = 12;
const TONAPI_EVERY_S = 300;
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

async function measure(owners: number, maxHeaderSize: number) {
  const model = new TonChainModel(network.tokens[0]!.contract);
  const server = await startIndexServer(model, {}, { maxHeaderSize });
  closers.push(server.close);
  const clock = new ManualClock();
  const client = (url: string) => new TonHttpClient({ url, clock, sleep: async (ms) => clock.advance(ms), requestsPerSecond: 1000 });
  const toncenter = new ToncenterReader({ network, client: client(server.toncenterUrl) });
  const tonapi = new TonapiReader({ network, client: client(server.tonapiUrl) });
  const recipients = Array.from({ length: owners }, (_, i) => owner(i));
  const poll = async () => {
    const head = (await toncenter.finalHead()).number;
    return toncenter.readTransfers({ from: head - 10n, to: head, recipients, finalAtOrBelow: head });
  };
  const sweep = async () => {
    const head = (await tonapi.finalHead()).number;
    return tonapi.readTransfers({ from: head - 10n, to: head, recipients, finalAtOrBelow: head });
  };
  await poll();
  await sweep();
  // Steady state: the window's start block is known, nothing moved.
  let before = server.counts.toncenter;
  await poll();
  const perPoll = server.counts.toncenter - before;
  before = server.counts.tonapi;
  await sweep();
  const perSweep = server.counts.tonapi - before;
  // One payment: what it adds to a poll and a sweep.
  model.head += 1;
  await model.pay(owner(-1), owner(0), 1_000_000n, { at: model.head - 2 });
  before = server.counts.toncenter;
  const read = await poll();
  assert.equal(read.transfers.length, 1);
  const paymentToncenter = server.counts.toncenter - before - perPoll;
  before = server.counts.tonapi;
  assert.equal((await sweep()).transfers.length, 1);
  const paymentTonapi = server.counts.tonapi - before - perSweep;
  const perDay = (DAY_S / TONCENTER_EVERY_S) * perPoll + (DAY_S / TONAPI_EVERY_S) * perSweep;
  return { owners, perPoll, perSweep, paymentToncenter, paymentTonapi, perDay, ownersPerRequest: toncenter.ownersPerRequest() };
}

test('requests a day at 1, 100 and 1,000 watched owners with invoices open', async () => {
  const whole = [await measure(1, 128 * 1024), await measure(100, 128 * 1024), await measure(1000, 128 * 1024)];
  const capped = await measure(1000, 16 * 1024);
  for (const m of [...whole, capped]) {
    process.stdout.write(
      `# TON ${m.owners} owners (${m.ownersPerRequest} a request): toncenter ${m.perPoll}/poll, tonapi ${m.perSweep}/sweep, ` +
        `${m.perDay} requests a day; a payment adds ${m.paymentToncenter} toncenter and ${m.paymentTonapi} tonapi requests\n`,
    );
  }
  assert.deepEqual(
    whole.map((m) => [m.perPoll, m.perSweep]),
    [
      [2, 2],
      [2, 2],
      [2, 11],
    ],
  );
  assert.ok(whole[2]!.perDay <= 20_000, `${whole[2]!.perDay} a day at 1,000 owners`);
  assert.equal(capped.ownersPerRequest, 250);
  assert.equal(capped.perPoll, 5);
  assert.equal(whole[2]!.paymentToncenter, 1, 'one traces request');
});
