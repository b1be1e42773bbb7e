/** The Wallet resource and its requests (docs/api.md, Wallets). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { isValidTronAddress, NETWORK_IDS, TRON_ADDRESS_RE, type NetworkId } from '../lib/tron.js';
import type { Wallet } from './wallets.repo.js';

export const WalletSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    address: z.string().openapi({ description: 'TRON base58check address' }),
    network: z.enum(NETWORK_IDS).openapi({ description: "The instance's TRON network" }),
    verified: z.literal(false).openapi({ description: 'Ownership is never verified' }),
    verification_status: z.literal('unverified'),
    created_at: DateTime,
    archived: z
      .boolean()
      .openapi({ description: 'An archived wallet takes no new invoices (409 wallet_archived); its address is still watched for late payments' }),
  })
  .openapi('Wallet');

export const CreateWalletSchema = z
  .strictObject({
    label: z.string().min(1).max(80),
    address: z
      .string()
      .regex(TRON_ADDRESS_RE, 'expected a TRON address: T followed by 33 base58 characters')
      .refine(isValidTronAddress, 'the address checksum is not valid')
      .openapi({
        pattern: TRON_ADDRESS_RE.source,
        description: 'A TRON address in base58check: T and 33 base58 characters, whose checksum must be valid (400 validation_error otherwise)',
        example: 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre',
      }),
  })
  .openapi('CreateWallet');

export const WalletEnvelopeSchema = z.object({ wallet: WalletSchema }).openapi('WalletEnvelope');
export const WalletListSchema = z.object({ wallets: z.array(WalletSchema) }).openapi('WalletList');

export const WalletIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path', description: 'The wallet id' }, example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g' }),
});

export const UpdateWalletSchema = z
  .strictObject({
    label: z.string().trim().min(1).max(80).optional(),
    archived: z.boolean().optional().openapi({ description: 'true archives the wallet, false restores it' }),
  })
  .refine((b) => b.label !== undefined || b.archived !== undefined, { message: 'give label, archived or both' })
  .openapi('UpdateWallet', { minProperties: 1 });

export function toWalletResponse(w: Wallet) {
  return {
    id: w.id,
    label: w.label,
    address: w.address,
    network: w.network as NetworkId,
    verified: false as const,
    verification_status: 'unverified' as const,
    created_at: iso(w.createdAt),
    archived: w.archivedAt !== null,
  };
}
