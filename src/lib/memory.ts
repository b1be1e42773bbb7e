/**
 * Hands back the memory that start-up grew and the idle process no longer needs. V8 keeps the young
 * generation at the size start-up's allocations grew it to (about 16 MB on Node 26) and its memory
 * reducer does not shrink it while the process idles, so an idle `gatewayd serve` would hold it for
 * good. One "last resort" full collection, what V8 runs itself under memory pressure, compacts the
 * heap and shrinks the young generation; it grows again under load, as before (no flag limits it).
 * `gc` is reached through V8's own flag for this one call and hidden again at once.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export function releaseStartupMemory(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  setFlagsFromString('--no-expose-gc');
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
