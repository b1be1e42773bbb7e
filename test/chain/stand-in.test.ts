/** The TronGrid stand-in itself: other features and the benchmarks rely on it behaving like TronGrid. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkers } from '../../src/workers.js';
import { startTestApp } from '../helpers/app.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { randomAddress, SAMPLE_PAYER, trc20Record } from '../helpers/tron-samples.js';

test('stand-in: filters, camelCase parameters, ordering, fingerprint pages, limit and address errors', async () => {
  const tg = await startTronGrid({ now: () => 1_800_000_000_000 });
  try {
    const a = randomAddress();
    for (let i = 0; i < 5; i++) tg.pay({ to: a, amount: BigInt(i + 1), blockTimestamp: 1_700_000_000_000 + i * 3000 });
    tg.addRecord(a, trc20Record({ txId: '11'.repeat(32), from: a, to: SAMPLE_PAYER, amount: 9n, blockTimestamp: 1_700_000_000_000 }));
    tg.pay({ to: a, amount: 7n, blockTimestamp: 1_700_000_100_000, unconfirmed: true });
    const get = async (query: string) => {
      const res = await fetch(`${tg.url}/v1/accounts/${a}/transactions/trc20?${query}`);
      return { status: res.status, text: await res.text() };
    };
    const body = (r: { text: string }) => JSON.parse(r.text) as { data: Array<{ value: string }>; meta: { fingerprint?: string; links?: { next: string }; page_size: number } };

    const all = body(await get('onlyConfirmed=true&onlyTo=true&orderBy=block_timestamp,asc&minTimestamp=1700000003000'));
    assert.deepEqual(all.data.map((r) => r.value), ['2', '3', '4', '5']);
    assert.equal(all.meta.page_size, 4);
    assert.equal(all.meta.fingerprint, undefined);
    assert.deepEqual(body(await get('only_to=false')).data.map((r) => r.value), ['7', '5', '4', '3', '2', '1', '9'], 'default: newest first, unconfirmed included');

    const q = 'only_confirmed=true&only_to=true&order_by=block_timestamp,asc&limit=2';
    const p1 = body(await get(q));
    assert.deepEqual(p1.data.map((r) => r.value), ['1', '2']);
    assert.match(p1.meta.links!.next, /^https:\/\/api\.trongrid\.io\//);
    const p2 = body(await get(`${q}&fingerprint=${p1.meta.fingerprint}`));
    assert.deepEqual(p2.data.map((r) => r.value), ['3', '4']);
    assert.equal((await get(`only_to=true&limit=2&fingerprint=${p1.meta.fingerprint}`)).status, 400, 'other parameters must stay the same');

    assert.deepEqual(await get('limit=201'), { status: 400, text: '' });
    const bad = await fetch(`${tg.url}/v1/accounts/TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u/transactions/trc20`);
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { success: false, error: 'A valid account address is required.', statusCode: 400 });
    assert.equal(tg.count('trc20'), 7);

    const head = await (await fetch(`${tg.url}/walletsolidity/getnowblock`)).json() as { block_header: { raw_data: { timestamp: number } } };
    assert.equal(head.block_header.raw_data.timestamp, Math.floor((1_800_000_000_000 - 57_000) / 3000) * 3000);
    const notYet = await fetch(`${tg.url}/walletsolidity/gettransactioninfobyid?value=${'22'.repeat(32)}`);
    assert.deepEqual(await notYet.json(), {});
    const parseError = await fetch(`${tg.url}/walletsolidity/gettransactioninfobyid`, { method: 'POST', body: 'nope' });
    assert.equal(parseError.status, 200);
    assert.match(((await parseError.json()) as { Error: string }).Error, /ParseException/);
  } finally {
    await tg.close();
  }
});

test('serve runs the chain watcher every tron.poll_interval_seconds', async () => {
  const t = await startTestApp({ config: { tron: { poll_interval_seconds: 7 } } });
  try {
    const chain = createWorkers(t.deps).find((w) => w.name === 'chain');
    assert.equal(chain?.intervalMs, 7000);
    assert.equal(await chain!.runOnce(), false);
    assert.equal(t.deps.watcherStatus.state, 'idle');
  } finally {
    await t.close();
  }
});
