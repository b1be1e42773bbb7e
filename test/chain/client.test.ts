import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BODY_BYTES, TronApiError, TronClient } from '../../src/chain/trongrid.client.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { randomAddress, USDT_CONTRACT } from '../helpers/tron-samples.js';

test('the client paces its requests under the provider rate limit', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: `${tg.url}/`, usdtContract: USDT_CONTRACT, apiKey: '', timeoutMs: 2000, maxRequestsPerSecond: 10 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, () => client.trc20Page(randomAddress(), 0)));
    const elapsed = performance.now() - started;
    assert.equal(tg.count('trc20'), 6);
    assert.ok(elapsed >= 480, `6 requests at 10/s take at least 0.5 s (took ${elapsed.toFixed(0)} ms)`);
    assert.ok(tg.requests.every((r) => r.headers['tron-pro-api-key'] === undefined), 'no key header when none is configured');
  } finally {
    await tg.close();
  }
});

test('the client refuses a provider that answers for an invalid address, and never follows redirects', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: tg.url, usdtContract: USDT_CONTRACT, apiKey: 'k', timeoutMs: 2000, maxRequestsPerSecond: 0 });
    await assert.rejects(client.trc20Page('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', 0), (err: unknown) => err instanceof TronApiError && err.kind === 'bad_response' && /A valid account address is required/.test(err.message));
    tg.fail('receipt', { status: 302, headers: { location: 'https://api.trongrid.io/walletsolidity/gettransactioninfobyid' } });
    await assert.rejects(client.solidReceipt('00'.repeat(32)), (err: unknown) => err instanceof TronApiError && err.kind === 'network');
    assert.equal(await client.solidReceipt('00'.repeat(32)), undefined, '{} = not solidified yet');
    const head = await client.solidHead();
    assert.deepEqual(head, tg.currentSolidHead());
  } finally {
    await tg.close();
  }
});

test('the client refuses an oversized answer without holding it', async () => {
  const tg = await startTronGrid();
  try {
    const client = new TronClient({ apiUrl: tg.url, usdtContract: USDT_CONTRACT, apiKey: '', timeoutMs: 5000, maxRequestsPerSecond: 0 });
    tg.fail('trc20', { raw: `{"data":[${'"x",'.repeat(MAX_BODY_BYTES / 4)}"x"],"success":true,"meta":{}}` });
    await assert.rejects(client.trc20Page(randomAddress(), 0), (err: unknown) => err instanceof TronApiError && err.kind === 'bad_response' && err.endpoint === 'trc20' && /larger than/.test(err.message));
    const page = await client.trc20Page(randomAddress(), 0);
    assert.deepEqual(page, { records: [], fingerprint: undefined });
  } finally {
    await tg.close();
  }
});
