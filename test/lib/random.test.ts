import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { randomToken } from '../../src/lib/crypto.js';
import { randomBase64url } from '../../src/lib/random.js';

test('random text from the pool: every size whole, no bytes handed out twice across refills', () => {
  // Sizes that do not divide the 4 KiB pool, so draws cross refills at every offset.
  const sizes = [32, 16, 24, 7, 1, 33, 4096];
  const seen = new Set<string>();
  let drawn = 0;
  for (let i = 0; drawn < 64 * 4096; i++) {
    const size = sizes[i % sizes.length]!;
    const text = randomBase64url(size);
    const bytes = Buffer.from(text, 'base64url');
    assert.equal(bytes.length, size);
    assert.equal(text, bytes.toString('base64url'));
    drawn += size;
    // 16 bytes or more: a repeat would mean a reused part of the pool (chance ~2^-128 otherwise).
    if (size >= 16) {
      assert.ok(!seen.has(text), `drawn twice: ${text}`);
      seen.add(text);
      // Its halves too: an overlap of two draws shares bytes without being equal.
      for (const half of [bytes.subarray(0, 8), bytes.subarray(size - 8)]) {
        const key = `h${half.toString('hex')}`;
        assert.ok(!seen.has(key), 'a part of the pool was handed out twice');
        seen.add(key);
      }
    }
  }
  // Not all zero (a pool never filled) and not constant.
  const sample = Buffer.from(randomBase64url(4096), 'base64url');
  assert.ok(new Set(sample).size > 200);
});

test('ids and tokens keep their shapes; a pool size outside 1..4096 is refused', () => {
  assert.match(newId('inv'), /^inv_[A-Za-z0-9_-]{22}$/);
  assert.match(randomToken(), /^[A-Za-z0-9_-]{43}$/);
  assert.match(randomToken(24), /^[A-Za-z0-9_-]{32}$/);
  for (const bad of [0, -1, 4097, 1.5, Number.NaN]) assert.throws(() => randomBase64url(bad), RangeError);
});
