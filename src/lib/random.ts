import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for ids and checkout tokens, drawn from the CSPRNG 4 KiB at a time, as
 * crypto.randomUUID does: one call per 128 tokens of 32 bytes instead of one per token. A call of
 * randomBytes costs about 2 µs whatever its size: the checkout token alone was 1.3 % of an invoice
 * creation's instructions on SQLite (BENCHMARKS.md, "SQLite as fast as before PostgreSQL").
 *
 * Only for values the database keeps as they are anyway: the pool holds the next ones in memory
 * (outside the JavaScript heap, so not in a heap snapshot; in a core dump). Secrets kept hashed or
 * sealed (sessions, API keys, webhook secrets, reset and email tokens) take fresh bytes
 * (randomToken in crypto.ts). Each byte is handed out once, and as text, so no view of the pool
 * outlives its next refill.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

/** `bytes` (1 to 4096) random bytes as base64url. */
export function randomBase64url(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_SIZE) throw new RangeError(`randomBase64url: ${bytes} bytes`);
  if (offset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}
