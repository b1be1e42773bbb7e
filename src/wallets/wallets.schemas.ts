/** The Wallet resource and its requests (docs/api.md, Wallets). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { isValidTronAddress, TRON_ADDRESS_RE } from '../lib/tron.js';
import type { Wallet } from './wallets.repo.js';

export const WalletSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    address: z.string().openapi({ description: 'TRON base58check address' }),
    network: z.literal('tron-mainnet'),
    verified: z.literal(false).openapi({ description: 'Ownership is never verified' }),
    verification_status: z.literal('unverified'),
    created_at: DateTime,
  })
  .openapi('Wallet');

export const CreateWalletSchema = z
  .strictObject({
    label: z.string().min(1).max(80),
    address: z
      .string()
      .regex(TRON_ADDRESS_RE, 'expected a TRON address: T followed by 33 base58 characters')
      .refine(isValidTronAddress, 'the address checksum is not valid')
      .openapi({ pattern: TRON_ADDRESS_RE.source, example: 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre' }),
  })
  .openapi('CreateWallet');

export const WalletEnvelopeSchema = z.object({ wallet: WalletSchema }).openapi('WalletEnvelope');
export const WalletListSchema = z.object({ wallets: z.array(WalletSchema) }).openapi('WalletList');

export function toWalletResponse(w: Wallet) {
  return {
    id: w.id,
    label: w.label,
    address: w.address,
    network: w.network as 'tron-mainnet',
    verified: false as const,
    verification_status: 'unverified' as const,
    created_at: iso(w.createdAt),
  };
}
