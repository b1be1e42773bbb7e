/**
 * Wallet and invoice rows written straight into the database, for page tests that need an invoice
 * in a given state without going through allocation.
 */
import type { InvoicePrice } from '../../src/pricing/pricing.service.js';
import type { Db } from '../../src/db/database.js';
import { toDbAmount } from '../../src/lib/amounts.js';
import { randomToken } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { MINUTE, DAY } from '../../src/lib/clock.js';
import { NETWORKS, TOKEN, type TronNetwork } from '../../src/lib/tron.js';
import type { InvoiceStatus } from '../../src/db/schema.js';

export const WALLET_ADDRESS = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

export async function insertWallet(
  db: Db,
  merchantId: string,
  now: number,
  label = 'Main wallet',
  address = WALLET_ADDRESS,
  network: Readonly<TronNetwork> = NETWORKS.mainnet,
): Promise<string> {
  const id = newId('wal');
  await db.insertInto('wallets').values({ id, merchant_id: merchantId, label, address, network: network.id, created_at: now }).execute();
  await db.insertInto('wallet_networks').values({ wallet_id: id, network: network.id, address }).execute();
  return id;
}

export interface InvoiceRowInput {
  merchantId: string;
  walletId: string;
  now: number;
  base?: bigint;
  adjustment?: bigint;
  status?: InvoiceStatus;
  description?: string | null;
  metadata?: Record<string, unknown>;
  orderId?: string;
  expiresInMinutes?: number;
  txHash?: string | null;
  /** The instance's network (default mainnet). */
  network?: Readonly<TronNetwork>;
  /** A fiat price the invoice was created from. */
  price?: InvoicePrice;
}

export async function insertInvoice(db: Db, input: InvoiceRowInput): Promise<{ id: string; checkoutToken: string }> {
  const id = newId('inv');
  const checkoutToken = randomToken(24);
  const base = input.base ?? 25_000_000n;
  const adjustment = input.adjustment ?? 1n;
  await db
    .insertInto('invoices')
    .values({
      id,
      merchant_id: input.merchantId,
      wallet_id: input.walletId,
      network: (input.network ?? NETWORKS.mainnet).id,
      token: TOKEN,
      token_contract: (input.network ?? NETWORKS.mainnet).usdtContract,
      wallet_address: WALLET_ADDRESS,
      merchant_order_id: input.orderId ?? `order-${id}`,
      idempotency_key: `idem-${id}`,
      request_fingerprint: 'x',
      base_amount: toDbAmount(base),
      adjustment: toDbAmount(adjustment),
      payable_amount: toDbAmount(base + adjustment),
      status: input.status ?? 'pending',
      description: input.description === undefined ? 'Order #1001' : input.description,
      metadata: JSON.stringify(input.metadata ?? {}),
      checkout_token: checkoutToken,
      tx_hash: input.txHash ?? null,
      confirmed_at: null,
      created_at: input.now,
      expires_at: input.now + (input.expiresInMinutes ?? 20) * MINUTE,
      reserved_until: input.now + 90 * DAY,
      price_amount: input.price?.amount ?? null,
      price_currency: input.price?.currency ?? null,
      price_rate: input.price?.rate ?? null,
      price_markup_percent: input.price?.markupPercent ?? null,
      price_sources: input.price ? JSON.stringify(input.price.sources) : null,
      price_rate_at: input.price?.rateAt ?? null,
    })
    .execute();
  return { id, checkoutToken };
}
