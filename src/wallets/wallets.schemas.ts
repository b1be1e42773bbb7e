/** The Wallet resource and its requests (docs/api.md, Wallets). */
import { z } from '@hono/zod-openapi';
import { addressPatternOf } from '../chains/address-codec.js';
import { NETWORK_IDS, NETWORKS, type NetworkId } from '../chains/networks.js';
import { associatedTokenAddress } from '../chains/solana/address.js';
import { DateTime, INSTANCE_MARK } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import type { WalletWithNetworks } from './wallets.repo.js';

/** Every family's printed shape (the checksum is checked by the server, with the networks). */
export const ANY_ADDRESS_PATTERN = addressPatternOf();

/**
 * A network id in a request: any id of the registry in the schema; the document an instance serves
 * lists only the networks it enabled (src/openapi-instance.ts), and the server refuses the others.
 */
function requestNetworks(description: string) {
  return z
    .array(z.enum(NETWORK_IDS).openapi({ [INSTANCE_MARK]: 'enabled_network' }))
    .min(1, 'give at least one network')
    .max(NETWORK_IDS.length)
    .refine((list) => new Set(list).size === list.length, 'give each network once')
    .openapi({ uniqueItems: true, description });
}

export const WalletSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    address: z.string().openapi({
      description:
        "The receiving address: base58check on TRON, the EIP-55 checksum form on the EVM networks, the owner's (wallet's) base58 " +
        'address on Solana, the raw form `0:` and 64 lower-case hex digits on TON (whichever form it was given in)',
    }),
    network: z.enum(NETWORK_IDS).openapi({ description: "The wallet's own network: the first of `networks`" }),
    networks: z
      .array(z.enum(NETWORK_IDS))
      .min(1)
      .openapi({
        description:
          'Every network this wallet receives on, its own (`network`) first: one TRON network, or one or more EVM networks for an EVM address ' +
          '(the same address on each; payments to it on any of them are watched)',
      }),
    token_accounts: z
      .array(
        z.object({
          network: z.enum(NETWORK_IDS),
          token: z.enum(['USDT', 'USDC']),
          address: z.string().openapi({ description: 'The associated token account (ATA) of this owner for the token' }),
        }),
      )
      .optional()
      .openapi({
        description:
          'Solana only: the token account each token is paid into, derived from the owner `address` and the token mint (the associated token ' +
          'account). A payer pays the owner address; their wallet sends to this account, and creates it (paying its rent once) if it does not exist yet.',
      }),
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
      .regex(
        new RegExp(ANY_ADDRESS_PATTERN),
        'expected a TRON address (T followed by 33 base58 characters) or an EVM address (0x followed by 40 hex digits), or a Solana ' +
          'address (32 to 44 base58 characters) or a TON address (0:<64 hex digits>, or 48 characters such as UQ... or EQ...)',
      )
      .openapi({
        // The pattern is this instance's: the shapes of the families it receives on (src/openapi-instance.ts).
        [INSTANCE_MARK]: 'wallet_address',
        pattern: ANY_ADDRESS_PATTERN,
        description:
          'A TRON address in base58check (T and 33 base58 characters), an EVM address (0x and 40 hex digits), a Solana wallet address ' +
          '(base58, 32 bytes) or a TON address in any printed form, of a family this instance receives on. A TRON checksum must be valid; ' +
          'an EVM address in all lower (or upper) case is accepted and stored in its EIP-55 checksum form, and one in mixed case must be that ' +
          'form exactly. On Solana give the wallet (owner) address: a token mint, or a token account or other address off the ed25519 curve, ' +
          'is refused. On TON the raw `0:…`, bounceable `EQ…` and non-bounceable `UQ…` forms are accepted and stored raw; a testnet-flagged ' +
          'form (`kQ…`, `0Q…`) only on a test network. A wrong checksum or shape is 400 `validation_error` saying what is wrong.',
        example: 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre',
      }),
    networks: requestNetworks(
      "The networks the address receives on, each once, the first becoming the wallet's own network. Default: the TRON network for a TRON " +
        'address; every EVM network this instance enabled for an EVM address. A network this instance has not enabled, or of another family ' +
        'than the address ("a TRON address cannot receive on bsc-mainnet"), is 400 `validation_error`, and nothing is registered.',
    ).optional(),
  })
  .openapi('CreateWallet', {
    // One rule per family this instance receives on: the address's shape decides which networks it may name (src/openapi-instance.ts).
    [INSTANCE_MARK]: 'wallet_families',
  });

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
    networks: requestNetworks(
      'Replaces the networks the wallet receives on, each once, the first becoming its own network; each must be enabled on this ' +
        "instance and of the address's family (400 `validation_error` otherwise). A network on which an invoice of this wallet still " +
        'waits for payment cannot be left out (409 `wallet_network_in_use`).',
    ).optional(),
  })
  .refine((b) => b.label !== undefined || b.archived !== undefined || b.networks !== undefined, { message: 'give label, archived, networks or several' })
  .openapi('UpdateWallet', { minProperties: 1 });

export function toWalletResponse(w: WalletWithNetworks) {
  return {
    id: w.id,
    label: w.label,
    address: w.address,
    network: w.network as NetworkId,
    networks: w.networks,
    ...tokenAccounts(w),
    verified: false as const,
    verification_status: 'unverified' as const,
    created_at: iso(w.createdAt),
    archived: w.archivedAt !== null,
  };
}

/** A Solana wallet's associated token account per network and token; nothing for another family's wallet. */
function tokenAccounts(w: WalletWithNetworks) {
  const accounts = w.networks
    .map((id) => NETWORKS[id])
    .filter((n) => n.family === 'solana')
    .flatMap((n) => n.tokens.map((t) => ({ network: n.id, token: t.symbol, address: associatedTokenAddress(w.address, t.contract) })));
  return accounts.length > 0 ? { token_accounts: accounts } : {};
}
