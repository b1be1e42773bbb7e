/**
 * Micro-units (six decimals, the API's unit on every network) to a token's raw on-chain integer and
 * back. A 6-decimal token's raw value is the micro-units themselves; an 18-decimal token's is
 * micro-units x 10^12, and a raw value with a non-zero digit below the sixth decimal has no exact
 * micro-unit amount: it is reported as inexact, never rounded, so it can never match an invoice.
 */
import { micros, type Micros } from '../lib/amounts.js';
import type { Scale, ScaledAmount } from './family.js';

const MICRO_DECIMALS = 6;

function factor(decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < MICRO_DECIMALS || decimals > 36) {
    throw new Error(`unsupported token decimals ${decimals}: gatewayd scales tokens of 6 to 36 decimals`);
  }
  return 10n ** BigInt(decimals - MICRO_DECIMALS);
}

/** The raw on-chain value of an amount of micro-units for a token of `decimals`. */
export function toRaw(amount: Micros, decimals: number): bigint {
  if (amount < 0n) throw new Error('a token amount is never negative');
  return amount * factor(decimals);
}

/** The micro-units of a raw on-chain value, or `below_micro_unit` when it has digits below 10^-6. */
export function fromRaw(raw: bigint, decimals: number): ScaledAmount {
  if (raw < 0n) throw new Error('a token amount is never negative');
  const f = factor(decimals);
  if (raw % f !== 0n) return { exact: false, reason: 'below_micro_unit' };
  return { exact: true, micros: micros(raw / f) };
}

export const tokenScale: Scale = { toRaw, fromRaw };
