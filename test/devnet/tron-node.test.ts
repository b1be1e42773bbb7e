/** The simulated TRON node: java-tron's shapes, solidification lag, filler, injection, faults, control endpoint. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { tronAddressToHex } from '../../src/lib/tron.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';

const T0 = 1_800_000_000_000;
const MERCHANT = 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx';

async function post(url: string, body: unknown): Promise<{ status: number; text: string; json: () => any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

test('simulated node: heads follow the clock, solidity lags, blocks carry filler and injected transfers in java-tron shapes', async () => {
  let now = T0;
  const node = await startSimulatedTron({ now: () => now, genesisTime: T0 - 3000 * 100, genesisBlock: 1000, solidityLag: 19, fillerPerBlock: [20, 30] });
  try {
    assert.deepEqual(node.head(), { number: 1100, timestamp: T0 });
    const solid = (await (await fetch(`${node.url}/walletsolidity/getnowblock`)).json()) as any;
    assert.equal(solid.block_header.raw_data.number, 1081);
    assert.equal(solid.block_header.raw_data.timestamp, T0 - 19 * 3000);
    assert.ok(solid.transactions.length >= 20);
    const full = (await (await fetch(`${node.url}/wallet/getnowblock`)).json()) as any;
    assert.equal(full.block_header.raw_data.number, 1100);

    const paid = node.transfer({ to: MERCHANT, amount: '41.677389' });
    assert.equal(paid.blockNumber, 1101);
    // Above the solidified head: the solidity endpoint answers [] as java-tron does; the full node has it once produced.
    assert.deepEqual((await post(`${node.url}/walletsolidity/gettransactioninfobyblocknum`, { num: 1101 })).json(), []);
    now += 20 * 3000;
    const infos = (await post(`${node.url}/walletsolidity/gettransactioninfobyblocknum`, { num: 1101 })).json() as any[];
    assert.ok(infos.length >= 21);
    for (const i of infos) {
      assert.equal(i.blockNumber, 1101);
      assert.equal(i.blockTimeStamp, T0 + 3000);
      assert.match(i.id, /^[0-9a-f]{64}$/);
    }
    const mine = infos.find((i) => i.id === paid.txId);
    assert.equal(mine.receipt.result, 'SUCCESS');
    assert.equal(mine.log[0].address, tronAddressToHex(USDT_CONTRACT)!.slice(2), 'log address: hex without the 41 prefix');
    assert.equal(mine.log[0].topics.length, 3);
    assert.equal(mine.log[0].topics[2], `000000000000000000000000${tronAddressToHex(MERCHANT)!.slice(2)}`);
    assert.equal(BigInt(`0x${mine.log[0].data}`), 41_677_389n);
    // Filler: TRX transfers without logs, failed calls, zero-value or fake-token logs appear over a few blocks.
    const many = (
      await Promise.all([1090, 1091, 1092, 1093, 1094, 1095].map((num) => post(`${node.url}/walletsolidity/gettransactioninfobyblocknum`, { num })))
    ).flatMap((r) => r.json() as any[]);
    assert.ok(
      many.some((i) => !i.log && !i.receipt.result),
      'a TRX transfer',
    );
    assert.ok(
      many.some((i) => i.result === 'FAILED'),
      'a failed call',
    );
    assert.ok(
      many.some((i) => i.log && i.log[0].address !== tronAddressToHex(USDT_CONTRACT)!.slice(2)),
      'a fake token',
    );
    assert.ok(
      many.some((i) => i.log && BigInt(`0x${i.log[0].data}`) === 0n),
      'a zero-value transfer',
    );
    // The same block reads the same twice (GET with query parameters too).
    const again = (await (await fetch(`${node.url}/walletsolidity/gettransactioninfobyblocknum?num=1101`)).json()) as any[];
    assert.deepEqual(again, infos);
    const block = (await post(`${node.url}/walletsolidity/getblockbynum`, { num: 1101 })).json();
    assert.equal(block.transactions.length, infos.length);
    assert.equal((await post(`${node.url}/walletsolidity/gettransactioninfobyid`, { value: paid.txId })).json().id, paid.txId);
    assert.equal(node.count('blockinfo'), 9);
  } finally {
    await node.close();
  }
});

test('simulated node: faults (429, 5xx, HTML, truncated JSON, inconsistent re-read) and the HTTP control endpoint', async () => {
  let now = T0;
  const node = await startSimulatedTron({ now: () => now, genesisTime: T0 - 3000 * 100, genesisBlock: 1000 });
  try {
    node.fail('blockinfo', { status: 429, body: { Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 30s' } });
    node.fail('blockinfo', { status: 503, body: 'Service Unavailable' });
    node.fail('blockinfo', { raw: '<html><body>502 Bad Gateway</body></html>' });
    node.fail('blockinfo', { raw: '[{"id":"ab' });
    node.fail('blockinfo', { inconsistent: true });
    const read = () => post(`${node.url}/walletsolidity/gettransactioninfobyblocknum`, { num: 1050 });
    assert.equal((await read()).status, 429);
    assert.equal((await read()).status, 503);
    assert.match((await read()).text, /<html>/);
    assert.throws(() => JSON.parse('[{"id":"ab'));
    assert.equal((await read()).text, '[{"id":"ab');
    const altered = (await read()).json();
    const honest = (await read()).json();
    assert.notDeepEqual(altered, honest);
    assert.deepEqual(honest, node.blockInfos(1050));

    // Another process injects a payment and a fault over HTTP.
    const r = await post(`${node.url}/_sim/transfer`, { to: MERCHANT, amount: '12.000001', result: 'REVERT' });
    assert.equal(r.status, 200);
    const landed = r.json();
    assert.equal(landed.block_number, 1101);
    assert.equal(landed.log_index, -1);
    assert.equal((await post(`${node.url}/_sim/transfer`, { to: 'Tnot-an-address', amount: 1 })).status, 400);
    assert.equal((await post(`${node.url}/_sim/fault`, { endpoint: 'nowblock', fault: { status: 500 } })).status, 200);
    assert.equal((await fetch(`${node.url}/walletsolidity/getnowblock`)).status, 500);
    const state = (await (await fetch(`${node.url}/_sim/state`)).json()) as any;
    assert.equal(state.head.number, 1100);
    assert.equal(state.solid_head.number, 1081);
    assert.equal(state.requests.blockinfo, 6);
    now += 21 * 3000;
    const infos = (await post(`${node.url}/walletsolidity/gettransactioninfobyblocknum`, { num: 1101 })).json() as any[];
    const failed = infos.find((i) => i.id === landed.tx_id);
    assert.equal(failed.result, 'FAILED');
    assert.equal(failed.receipt.result, 'REVERT');
    assert.equal(failed.log, undefined);
  } finally {
    await node.close();
  }
});
