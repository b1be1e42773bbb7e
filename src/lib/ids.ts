import { randomBase64url } from './random.js';

export type IdPrefix = 'mch' | 'wal' | 'inv' | 'key' | 'whk' | 'dlv' | 'evt' | 'tkt' | 'msg' | 'trf' | 'req' | 'reg' | 'shc' | 'snt' | 'tgm' | 'dsp';

/** A prefixed random id with 128 bits of randomness, e.g. `inv_3kTq...` (not guessable). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase64url(16)}`;
}
