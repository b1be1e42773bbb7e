/**
 * Money: integer micro-units (1 USDT = 1 000 000) as bigint in code, a six-decimal string in JSON.
 * No floating point anywhere on this path.
 */
export const MICRO = 1_000_000n;

declare const microsUnit: unique symbol;
/**
 * An amount of USDT in micro-units: a bigint that carries its unit in the type, so a plain count,
 * a fiat minor unit or a TRX sun amount cannot be passed where micro-USDT is meant. Sums and
 * differences of Micros are plain bigint again; `micros()` states the unit once more.
 */
export type Micros = bigint & { readonly [microsUnit]: 'micro-USDT' };

/** States that a bigint is an amount of micro-USDT. */
export function micros(value: bigint): Micros {
  return value as Micros;
}

const AMOUNT_RE = /^(0|[1-9][0-9]{0,9})(\.([0-9]{1,6}))?$/;

/** Parses a decimal string such as `12.5` into micro-units; undefined when it does not match the pattern. */
export function parseAmount(text: string): Micros | undefined {
  const m = AMOUNT_RE.exec(text);
  if (!m) return undefined;
  const whole = BigInt(m[1]!);
  const frac = BigInt((m[3] ?? '').padEnd(6, '0'));
  return micros(whole * MICRO + frac);
}

/** Formats micro-units with exactly six fractional digits. */
export function formatAmount(micro: Micros): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const text = `${abs / MICRO}.${(abs % MICRO).toString().padStart(6, '0')}`;
  return negative ? `-${text}` : text;
}

/**
 * SQLite keeps amounts as INTEGER; every amount we store stays far below 2^53, checked here. Takes
 * any bigint: a column's bounds and sums are computed in plain bigint, and the column names its unit.
 */
export function toDbAmount(micro: bigint): number {
  if (micro > BigInt(Number.MAX_SAFE_INTEGER) || micro < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('amount out of the storable range');
  }
  return Number(micro);
}

export function fromDbAmount(value: number | bigint): Micros {
  return micros(typeof value === 'bigint' ? value : BigInt(value));
}
