/**
 * How plausibly a transfer pays an invoice of the address it reached (docs/security.md, "Resolving
 * payments on a shared address"). A claim needs the amount close to the invoice's: within
 * CLOSE_PERCENT of the payable amount or within CLOSE_MICRO (a typical exchange fee), whichever is
 * larger, either way. Then, strongest first:
 * - `digits`: the transfer's last six decimals equal those of the invoice's payable amount, which
 *   carry its unique adjustment (a fee of whole USDT keeps them);
 * - `window`: its block time lies in the invoice's window [created_at, expires_at];
 * - `none`: neither, or not close.
 * Candidates are ranked by strength, then by the amount difference, then by how far the block time
 * lies outside the window, then newest first. Pure functions: no database here.
 */
import type { Invoice } from './invoice.model.js';
import type { Micros } from '../lib/amounts.js';

export type ClaimStrength = 'digits' | 'window' | 'none';

/** The last six decimals of a USDT amount in micro-units. */
export const DIGITS_MODULUS = 1_000_000n;
/** A claim's amount: at most this many percent above or below the payable amount... */
export const CLOSE_PERCENT = 10n;
/** ...or at most this far from it (2 USDT), whichever is larger. */
export const CLOSE_MICRO = 2_000_000n;

export interface Claim {
  strength: ClaimStrength;
  /** received - payable, micro-units: negative when short, positive when over. */
  difference: bigint;
  inWindow: boolean;
  /** How far the block time lies outside the window (ms), 0 inside. */
  outsideMs: number;
}

export type ClaimInvoice = Pick<Invoice, 'payableAmount' | 'createdAt' | 'expiresAt'>;
export interface ClaimTransfer {
  amount: Micros;
  blockTimestamp: number;
}

export function digitsMatch(amount: bigint, payable: bigint): boolean {
  return amount > 0n && amount % DIGITS_MODULUS === payable % DIGITS_MODULUS;
}

export function isClose(amount: bigint, payable: bigint): boolean {
  const diff = amount > payable ? amount - payable : payable - amount;
  return diff <= CLOSE_MICRO || diff * 100n <= payable * CLOSE_PERCENT;
}

/** The payable amounts an invoice may have to be close to `amount` (a superset, for a range query). */
export function closePayableRange(amount: bigint): { min: bigint; max: bigint } {
  const min = amount - CLOSE_MICRO < (amount * 100n) / (100n + CLOSE_PERCENT) ? amount - CLOSE_MICRO : (amount * 100n) / (100n + CLOSE_PERCENT);
  const max = amount + CLOSE_MICRO > (amount * 100n) / (100n - CLOSE_PERCENT) + 1n ? amount + CLOSE_MICRO : (amount * 100n) / (100n - CLOSE_PERCENT) + 1n;
  return { min: min < 0n ? 0n : min, max };
}

export function claimOf(t: ClaimTransfer, inv: ClaimInvoice): Claim {
  const inWindow = inv.createdAt <= t.blockTimestamp && t.blockTimestamp <= inv.expiresAt;
  const outsideMs = inWindow ? 0 : t.blockTimestamp < inv.createdAt ? inv.createdAt - t.blockTimestamp : t.blockTimestamp - inv.expiresAt;
  const close = isClose(t.amount, inv.payableAmount);
  const strength: ClaimStrength = close && digitsMatch(t.amount, inv.payableAmount) ? 'digits' : close && inWindow ? 'window' : 'none';
  return { strength, difference: t.amount - inv.payableAmount, inWindow, outsideMs };
}

const RANK: Record<ClaimStrength, number> = { digits: 0, window: 1, none: 2 };

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

/** Whether claim `a` is strictly stronger than `b`: a stronger kind, or the same kind and a smaller amount difference. */
export function strongerThan(a: Claim, b: Claim): boolean {
  if (RANK[a.strength] !== RANK[b.strength]) return RANK[a.strength] < RANK[b.strength];
  return a.strength !== 'none' && abs(a.difference) < abs(b.difference);
}

/** Most plausible first. */
export function compareClaims(a: Claim & { createdAt: number }, b: Claim & { createdAt: number }): number {
  if (RANK[a.strength] !== RANK[b.strength]) return RANK[a.strength] - RANK[b.strength];
  const da = abs(a.difference);
  const db = abs(b.difference);
  if (da !== db) return da < db ? -1 : 1;
  if (a.outsideMs !== b.outsideMs) return a.outsideMs - b.outsideMs;
  return b.createdAt - a.createdAt;
}

/** The invoices ranked for one transfer, each with its claim; most plausible first. */
export function rankInvoices<I extends ClaimInvoice & { createdAt: number }>(t: ClaimTransfer, invoices: readonly I[]): Array<{ invoice: I; claim: Claim }> {
  return invoices
    .map((invoice) => ({ invoice, claim: claimOf(t, invoice) }))
    .sort((a, b) => compareClaims({ ...a.claim, createdAt: a.invoice.createdAt }, { ...b.claim, createdAt: b.invoice.createdAt }));
}

/** The transfers ranked for one invoice, each with its claim; most plausible first. */
export function rankTransfers<T extends ClaimTransfer>(inv: ClaimInvoice, transfers: readonly T[]): Array<{ transfer: T; claim: Claim }> {
  return transfers
    .map((transfer) => ({ transfer, claim: claimOf(transfer, inv) }))
    .sort((a, b) => compareClaims({ ...a.claim, createdAt: a.transfer.blockTimestamp }, { ...b.claim, createdAt: b.transfer.blockTimestamp }));
}
