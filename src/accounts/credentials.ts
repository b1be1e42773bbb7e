/**
 * What else opens an account besides its password and sessions: its API keys and webhooks (a
 * webhook's secret lets its holder forge nothing, but its URL receives every event). A password
 * reset offers to revoke them all, for an owner who fears someone else held the account.
 */
import { isKeyActive, listMerchantKeys } from '../api-keys/api-keys.repo.js';
import type { Db, Trx } from '../db/database.js';
import { cancelPendingDeliveries, countActiveWebhooks, deactivateWebhook } from '../webhooks/webhooks.repo.js';

export interface CredentialCounts {
  /** Keys neither revoked nor expired. */
  apiKeys: number;
  /** Active webhooks. */
  webhooks: number;
}

export async function countCredentials(db: Db, merchantId: string, now: number): Promise<CredentialCounts> {
  const keys = await listMerchantKeys(db, merchantId);
  return { apiKeys: keys.filter((k) => isKeyActive(k, now)).length, webhooks: await countActiveWebhooks(db, merchantId) };
}

/** Revokes every active API key and deactivates every webhook (cancelling its pending deliveries). */
export async function revokeCredentials(trx: Trx, merchantId: string, now: number): Promise<CredentialCounts> {
  const keys = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const active = await trx.selectFrom('webhooks').select('id').where('merchant_id', '=', merchantId).where('active', '=', 1).execute();
  let webhooks = 0;
  for (const { id } of active) {
    if (await deactivateWebhook(trx, id, now)) {
      webhooks += 1;
      await cancelPendingDeliveries(trx, id, now);
    }
  }
  return { apiKeys: Number(keys.numUpdatedRows), webhooks };
}
