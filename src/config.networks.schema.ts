/**
 * The schemas of the networks watched beside TRON ([[evm.networks]], [[solana.networks]],
 * [[ton.networks]]) and of the URLs and keys their providers take: a part of config.schema.ts,
 * kept apart so each file reads at one sitting.
 */
import { z } from 'zod';
import { EVM_NETWORK_IDS, SOLANA_NETWORK_IDS, TON_NETWORK_IDS } from './chains/networks.js';

export const httpUrl = (message: string) =>
  z.string().refine(
    (v) => {
      try {
        const u = new URL(v);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message },
  );

/**
 * A provider's URL: absolute http(s), with no `user:pass@` (fetch refuses a URL with credentials,
 * so such a provider would pass the configuration and fail every request). `keyForm` says where a
 * key goes instead.
 */
export const providerUrl = (keyForm: string) =>
  httpUrl('expected an absolute http(s) URL').superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return; // said by httpUrl
    }
    if (u.username !== '' || u.password !== '') {
      ctx.addIssue({
        code: 'custom',
        message: `a provider URL cannot carry a user name or password (user:pass@): requests refuse it; ${keyForm}`,
      });
    }
  });
export const TON_KEY_FORM = 'give the key as api_key (sent as X-API-Key or a bearer token) instead';
export const TRON_KEY_FORM = 'give the key as api_key (sent as the TRON-PRO-API-KEY header) instead';
export const EVM_KEY_FORM = "put the key in the URL's path, as the provider gives it (for example https://eth-mainnet.example.com/v2/KEY)";

/**
 * server.public_url, parsed and normalised once here: lower-case scheme and host, no default port,
 * no trailing slash. Everything else (cookies' Secure flag, links, the allowed Origin) reads the
 * normalised value, so `HTTPS://Pay.Example.com/` behaves exactly like `https://pay.example.com`.
 */

/**
 * The EVM networks this instance watches beside its TRON network (docs/configuration.md, "EVM
 * networks"), each with its JSON-RPC providers in order of preference. None by default.
 */
export const evmNetworksSchema = () =>
  z
    .strictObject({
      networks: z
        .array(
          z.strictObject({
            id: z.enum(EVM_NETWORK_IDS, { message: `expected one of ${EVM_NETWORK_IDS.map((n) => `"${n}"`).join(', ')}` }),
            providers: z
              .array(
                z.strictObject({
                  url: providerUrl(EVM_KEY_FORM),
                  /** Requests started per second at most; 0 = unpaced (an own node). */
                  requests_per_second: z.number().min(0).max(10_000).default(10),
                  timeout_seconds: z.number().positive().max(300).default(10),
                  /** The most blocks one eth_getLogs may span; 0 = learn it from the provider's refusals. */
                  max_block_range: z.number().int().min(0).max(1_000_000).default(0),
                }),
              )
              .default([]),
            /**
             * Which block is final: "finalized" (the default: the chain's own finality), "safe",
             * or a number of confirmations (the block hash at that height is checked before anything confirms).
             */
            finality: z
              .union([z.enum(['finalized', 'safe']), z.number().int().min(1).max(100_000)], {
                message: 'expected "finalized", "safe" or a number of confirmations',
              })
              .default('finalized'),
            /** Seconds between reads of the newest blocks while an invoice is open on this network; 0 = 5 s. */
            poll_interval_seconds: z.number().min(0).max(3600).default(0),
          }),
        )
        .default([]),
    })
    .prefault({});

/**
 * The Solana networks this instance watches (docs/configuration.md, "Solana and TON networks"),
 * each with its JSON-RPC providers in order of preference; read at `finalized` commitment. None by default.
 */
export const solanaNetworksSchema = () =>
  z
    .strictObject({
      networks: z
        .array(
          z.strictObject({
            id: z.enum(SOLANA_NETWORK_IDS, { message: `expected one of ${SOLANA_NETWORK_IDS.map((n) => `"${n}"`).join(', ')}` }),
            providers: z
              .array(
                z.strictObject({
                  url: providerUrl(EVM_KEY_FORM),
                  /** Requests started per second at most; 0 = unpaced (an own node). */
                  requests_per_second: z.number().min(0).max(10_000).default(4),
                  timeout_seconds: z.number().positive().max(300).default(10),
                }),
              )
              .default([]),
            /** Seconds between reads of the watched accounts while an invoice is open on this network; 0 = 10 s. */
            poll_interval_seconds: z.number().min(0).max(3600).default(0),
          }),
        )
        .default([]),
    })
    .prefault({});

/**
 * The TON networks this instance watches, each with its index providers (toncenter API v3,
 * tonapi v2) in order of preference; a transfer counts once committed in the masterchain. None by default.
 */
export const tonNetworksSchema = () =>
  z
    .strictObject({
      networks: z
        .array(
          z.strictObject({
            id: z.enum(TON_NETWORK_IDS, { message: `expected one of ${TON_NETWORK_IDS.map((n) => `"${n}"`).join(', ')}` }),
            providers: z
              .array(
                z.strictObject({
                  /** The API root: https://toncenter.com/api/v3 or https://tonapi.io. */
                  url: providerUrl(TON_KEY_FORM),
                  /** Which index API the URL serves. */
                  kind: z.enum(['toncenter', 'tonapi'], { message: 'expected "toncenter" or "tonapi"' }),
                  /** Sent as toncenter's X-API-Key or tonapi's bearer token; "" = none (toncenter then allows 1 request a second). */
                  api_key: z.string().default(''),
                  /** Requests started per second at most; 0 = unpaced. */
                  requests_per_second: z.number().min(0).max(10_000).default(1),
                  timeout_seconds: z.number().positive().max(300).default(10),
                }),
              )
              .default([]),
            /** Seconds between reads of the watched owners while an invoice is open on this network; 0 = 10 s. */
            poll_interval_seconds: z.number().min(0).max(3600).default(0),
          }),
        )
        .default([]),
    })
    .prefault({});
