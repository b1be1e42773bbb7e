/**
 * The merchant's underpayment settings (PATCH /me; table merchant_payment_settings, no row = the
 * defaults) and the rule that relates a transfer short of an open invoice to it (docs/payments.md,
 * "Fee-deducted payments"):
 * - `underpayment_tolerance`: how far short a transfer may be, a USDT amount ("1.00") or a
 *   percentage of the payable amount ("1%", up to two decimals); null = off (the default);
 * - `underpayment_auto_accept`: such a partial payment confirms its invoice by itself with
 *   `resolution: "tolerance"`; false (the default) = the owner decides.
 */
import type { Db, Trx } from '../db/database.js';
import { formatAmount, parseAmount, type Micros } from '../lib/amounts.js';

export interface PaymentSettings {
  /** As the merchant wrote it, normalised ("1.000000" or "1.5%"); null = off. */
  underpaymentTolerance: string | null;
  underpaymentAutoAccept: boolean;
}

export const DEFAULT_PAYMENT_SETTINGS: PaymentSettings = { underpaymentTolerance: null, underpaymentAutoAccept: false };

/** "1.00", "0.5" (USDT, up to six decimals) or "1%", "2.5%" (percent of the payable amount, up to two decimals, above 0 and at most 100). */
export const TOLERANCE_PATTERN = '^([0-9]{1,9}(\\.[0-9]{1,6})?|[0-9]{1,3}(\\.[0-9]{1,2})?%)$';
/**
 * The same rule with its bounds, for the document and the console's form: an amount from 0.000001
 * with at most nine whole digits, or a percentage above 0 and at most 100 with at most two decimals
 * (without the leading zeros the server also reads), so a value the schema admits is never refused.
 */
export const BOUNDED_TOLERANCE_PATTERN =
  '^([1-9][0-9]{0,8}(\\.[0-9]{1,6})?|0\\.([1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}|0000[1-9][0-9]?|00000[1-9])|(100(\\.0{1,2})?|[1-9][0-9]?(\\.[0-9]{1,2})?|0\\.([1-9][0-9]?|0[1-9]))%)$';

export type Tolerance = { kind: 'amount'; micro: Micros } | { kind: 'percent'; hundredths: bigint };

/** A tolerance as written, or undefined when it is not one (zero and over 100% are not). */
export function parseTolerance(text: string): Tolerance | undefined {
  if (!new RegExp(TOLERANCE_PATTERN).test(text)) return undefined;
  if (text.endsWith('%')) {
    const [whole, frac = ''] = text.slice(0, -1).split('.');
    const hundredths = BigInt(whole!) * 100n + BigInt(frac.padEnd(2, '0'));
    return hundredths > 0n && hundredths <= 10_000n ? { kind: 'percent', hundredths } : undefined;
  }
  const micro = parseAmount(text);
  return micro !== undefined && micro > 0n ? { kind: 'amount', micro } : undefined;
}

/** The normalised text stored and shown: six decimals for an amount, the percentage without trailing zeros. */
export function formatTolerance(t: Tolerance): string {
  if (t.kind === 'amount') return formatAmount(t.micro);
  const whole = t.hundredths / 100n;
  const frac = (t.hundredths % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return `${whole}${frac ? `.${frac}` : ''}%`;
}

/** How far short of `payable` a transfer may be under this tolerance (micro-units, rounded down). */
export function allowedShortfall(t: Tolerance, payable: bigint): bigint {
  return t.kind === 'amount' ? t.micro : (payable * t.hundredths) / 10_000n;
}

export async function findPaymentSettings(db: Db | Trx, merchantId: string): Promise<PaymentSettings> {
  const row = await db.selectFrom('merchant_payment_settings').selectAll().where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? { underpaymentTolerance: row.underpayment_tolerance, underpaymentAutoAccept: row.underpayment_auto_accept === 1 } : DEFAULT_PAYMENT_SETTINGS;
}

/** Changes the given settings (undefined = keep); null turns the tolerance off. */
export async function updatePaymentSettings(
  db: Db | Trx,
  merchantId: string,
  changes: { underpaymentTolerance?: string | null; underpaymentAutoAccept?: boolean },
  now: number,
): Promise<PaymentSettings> {
  const current = await findPaymentSettings(db, merchantId);
  const next: PaymentSettings = {
    underpaymentTolerance: changes.underpaymentTolerance === undefined ? current.underpaymentTolerance : changes.underpaymentTolerance,
    underpaymentAutoAccept: changes.underpaymentAutoAccept ?? current.underpaymentAutoAccept,
  };
  const values = { underpayment_tolerance: next.underpaymentTolerance, underpayment_auto_accept: next.underpaymentAutoAccept ? 1 : 0, updated_at: now };
  await db
    .insertInto('merchant_payment_settings')
    .values({ merchant_id: merchantId, ...values })
    .onConflict((oc) => oc.column('merchant_id').doUpdateSet(values))
    .execute();
  return next;
}
