/**
 * Exact decimals for exchange rates and fiat prices: a bigint of units and a power-of-ten scale
 * (value = units / 10^scale). No floating point anywhere: a rate read from a source's JSON is kept
 * digit for digit, the median of two rates is exact (one more decimal), and the conversion to
 * micro-USDT is one integer division rounded up.
 */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL_RE = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
/** Longest decimal text accepted from a rate source (digits before and after the point). */
const MAX_DIGITS = 40;

/** A non-negative plain decimal ("7.115", "150", "0.9998"); undefined for anything else (no exponent, no sign). */
export function parseDecimal(text: string): Decimal | undefined {
  if (text.length > MAX_DIGITS + 1) return undefined;
  const m = DECIMAL_RE.exec(text);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  return normalize({ units: BigInt(m[1]! + frac), scale: frac.length });
}

/** Trailing fractional zeros removed: equal values have equal text. */
export function normalize(d: Decimal): Decimal {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

/** The shortest exact text ("7.115", "150"). */
export function formatDecimal(d: Decimal): string {
  const n = normalize(d);
  return withScale(n.units, n.scale);
}

/** Exactly `digits` fractional digits, rounded half up (for display: "7.1150"). */
export function formatFixed(d: Decimal, digits: number): string {
  return withScale(rescale(d, digits), digits);
}

function withScale(units: bigint, scale: number): string {
  const text = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}

/** units at another scale; a shorter scale rounds half up (values are never negative here). */
function rescale(d: Decimal, scale: number): bigint {
  if (scale >= d.scale) return d.units * 10n ** BigInt(scale - d.scale);
  const div = 10n ** BigInt(d.scale - scale);
  return (d.units + div / 2n) / div;
}

export function compare(a: Decimal, b: Decimal): number {
  const s = Math.max(a.scale, b.scale);
  const x = rescale(a, s);
  const y = rescale(b, s);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isZero(d: Decimal): boolean {
  return d.units === 0n;
}

/** The median: the middle value, or the exact mean of the two middle values. */
export function median(values: readonly Decimal[]): Decimal {
  if (values.length === 0) throw new RangeError('median of nothing');
  const sorted = [...values].sort(compare);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[mid]!;
  const a = sorted[mid - 1]!;
  const b = sorted[mid]!;
  const s = Math.max(a.scale, b.scale);
  // (a + b) / 2 = (a + b) * 5 / 10: exact with one more decimal.
  return normalize({ units: (rescale(a, s) + rescale(b, s)) * 5n, scale: s + 1 });
}

/** True when (max - min) / reference exceeds limitPercent, compared exactly. */
export function spreadExceeds(values: readonly Decimal[], reference: Decimal, limitPercent: Decimal): boolean {
  if (values.length < 2) return false;
  const sorted = [...values].sort(compare);
  const lo = sorted[0]!;
  const hi = sorted[sorted.length - 1]!;
  const s = Math.max(lo.scale, hi.scale, reference.scale);
  const spread = rescale(hi, s) - rescale(lo, s);
  // spread / ref * 100 > limit  <=>  spread * 100 * 10^ls > limit.units * ref
  return spread * 100n * 10n ** BigInt(limitPercent.scale) > limitPercent.units * rescale(reference, s);
}

/**
 * True when `value` lies further from `reference` than limitPercent of the reference, compared
 * exactly: |value - reference| * 100 > limit * reference.
 */
export function movesMoreThan(value: Decimal, reference: Decimal, limitPercent: Decimal): boolean {
  const s = Math.max(value.scale, reference.scale);
  const a = rescale(value, s);
  const b = rescale(reference, s);
  const distance = a > b ? a - b : b - a;
  return distance * 100n * 10n ** BigInt(limitPercent.scale) > limitPercent.units * b;
}

/** value * 10^power exactly (a negative power divides: 7.1 at -1 is 0.71). */
export function shift(d: Decimal, power: number): Decimal {
  return power >= 0 ? normalize({ units: d.units * 10n ** BigInt(power), scale: d.scale }) : normalize({ units: d.units, scale: d.scale - power });
}

/** The percentage by which max exceeds min, relative to the reference, for messages (2 decimals, rounded up). */
export function spreadPercentText(values: readonly Decimal[], reference: Decimal): string {
  const sorted = [...values].sort(compare);
  const s = Math.max(sorted[0]!.scale, sorted[sorted.length - 1]!.scale, reference.scale);
  const spread = rescale(sorted[sorted.length - 1]!, s) - rescale(sorted[0]!, s);
  const ref = rescale(reference, s);
  if (ref === 0n) return '∞';
  const hundredths = ceilDiv(spread * 10_000n, ref);
  return withScale(hundredths, 2);
}

export function ceilDiv(num: bigint, den: bigint): bigint {
  return (num + den - 1n) / den;
}

/**
 * The USDT price in micro-units of `amount` (fiat) at `rate` (fiat per 1 USDT) with `markupPercent`
 * added, rounded UP to a multiple of `roundMicro`:
 *   micro = ceil(amount * (100 + markup) / 100 / rate * 10^6 / roundMicro) * roundMicro
 * computed as one exact fraction of integers, so no digit is lost before the single rounding.
 */
export function convertToMicro(amount: Decimal, rate: Decimal, markupPercent: Decimal, roundMicro: bigint): bigint {
  if (rate.units <= 0n) throw new RangeError('rate must be positive');
  if (roundMicro < 1n) throw new RangeError('rounding step must be at least one micro-unit');
  const markupScale = 10n ** BigInt(markupPercent.scale);
  const num = amount.units * (100n * markupScale + markupPercent.units) * 10n ** BigInt(rate.scale) * 1_000_000n;
  const den = 10n ** BigInt(amount.scale) * markupScale * 100n * rate.units;
  return ceilDiv(num, den * roundMicro) * roundMicro;
}
