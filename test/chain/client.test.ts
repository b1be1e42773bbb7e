import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BODY_BYTES, TronApiError, TronClient } from '../../src/chain/tron.client.js';
import { startTronGrid } from '../helpers/trongrid.js';

test('the client paces its requests under the provider rate limit', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: `${tg.url}/`, apiKey: '', timeoutMs: 2000, maxRequestsPerSecond: 10 });
    const head = tg.solidHead().number;
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, (_, i) => client.blockInfos(head - i)));
    const elapsed = performance.now() - started;
    assert.equal(tg.count('blockinfo'), 6);
    assert.ok(elapsed >= 480, `6 requests at 10/s take at least 0.5 s (took ${elapsed.toFixed(0)} ms)`);
    assert.ok(
      tg.requests.every((r) => r.headers['tron-pro-api-key'] === undefined),
      'no key header when none is configured',
    );
    assert.deepEqual(client.stats.requests, 6);
  } finally {
    await tg.close();
  }
});

test('the client reads the solidified head and blocks, refuses redirects, and answers [] above the head', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: tg.url, apiKey: 'k', timeoutMs: 2000, maxRequestsPerSecond: 0 });
    const head = await client.solidHead();
    assert.equal(head.number, tg.solidHead().number);
    assert.equal(head.timestamp, tg.solidHead().timestamp);
    const infos = await client.blockInfos(head.number);
    assert.ok(infos.length > 0);
    assert.ok(infos.every((i) => i.blockNumber === head.number && i.blockTimeStamp === head.timestamp));
    assert.deepEqual(await client.blockInfos(head.number + 5), [], 'not solidified yet');
    tg.fail('blockinfo', { status: 302, headers: { location: 'https://api.trongrid.io/walletsolidity/gettransactioninfobyblocknum' } });
    await assert.rejects(client.blockInfos(head.number), (err: unknown) => err instanceof TronApiError && err.kind === 'network');
  } finally {
    await tg.close();
  }
});

test('the client refuses an oversized answer without holding it', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: tg.url, apiKey: '', timeoutMs: 5000, maxRequestsPerSecond: 0 });
    tg.fail('blockinfo', { raw: `[${'"x",'.repeat(MAX_BODY_BYTES / 4)}"x"]` });
    const n = tg.solidHead().number;
    await assert.rejects(
      client.blockInfos(n),
      (err: unknown) => err instanceof TronApiError && err.kind === 'bad_response' && err.endpoint === 'blockinfo' && /larger than/.test(err.message),
    );
    assert.ok((await client.blockInfos(n)).length > 0);
  } finally {
    await tg.close();
  }
});
