/**
 * Money: integer micro-units (1 USDT = 1 000 000) as bigint in code, a six-decimal string in JSON.
 * No floating point anywhere on this path.
 */
export const MICRO = 1_000_000n;

const AMOUNT_RE = /^(0|[1-9][0-9]{0,9})(\.([0-9]{1,6}))?$/;

/** Parses a decimal string such as `12.5` into micro-units; undefined when it does not match the pattern. */
export function parseAmount(text: string): bigint | undefined {
  const m = AMOUNT_RE.exec(text);
  if (!m) return undefined;
  const whole = BigInt(m[1]!);
  const frac = BigInt((m[3] ?? '').padEnd(6, '0'));
  return whole * MICRO + frac;
}

/** Formats micro-units with exactly six fractional digits. */
export function formatAmount(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const text = `${abs / MICRO}.${(abs % MICRO).toString().padStart(6, '0')}`;
  return negative ? `-${text}` : text;
}

/** SQLite keeps amounts as INTEGER; every amount we store stays far below 2^53, checked here. */
export function toDbAmount(micro: bigint): number {
  if (micro > BigInt(Number.MAX_SAFE_INTEGER) || micro < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('amount out of the storable range');
  }
  return Number(micro);
}

export function fromDbAmount(value: number | bigint): bigint {
  return typeof value === 'bigint' ? value : BigInt(value);
}
