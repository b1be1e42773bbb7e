import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'mch' | 'wal' | 'inv' | 'key' | 'whk' | 'dlv' | 'evt' | 'tkt' | 'msg' | 'trf' | 'req' | 'reg' | 'shc' | 'snt' | 'tgm' | 'dsp';

/**
 * Random bytes for ids, drawn from the CSPRNG 4 KiB at a time (one call per 256 ids instead of one
 * per id, as crypto.randomUUID does); each byte is handed out once.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

function randomBytes16(): Buffer {
  if (offset + 16 > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return bytes;
}

/** A prefixed random id with 128 bits of randomness, e.g. `inv_3kTq...` (not guessable). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes16().toString('base64url')}`;
}
