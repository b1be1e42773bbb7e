import { randomBytes } from 'node:crypto';

export type IdPrefix = 'mch' | 'wal' | 'inv' | 'key' | 'whk' | 'dlv' | 'evt' | 'tkt' | 'msg' | 'trf' | 'req';

/** A prefixed random id with 128 bits of randomness, e.g. `inv_3kTq...` (not guessable). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}
