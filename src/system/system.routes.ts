import { createRoute, z } from '@hono/zod-openapi';
import { watcherHealth } from '../chain/chain.health.js';
import { WatcherHealthSchema } from '../chain/chain.schemas.js';
import { databaseId } from '../db/network-guard.js';
import { NetworkHealthSchema, networksHealth } from './networks.health.js';
import { livePayments } from './live-payments.js';
import { PricingHealthSchema, toPricingHealthResponse } from '../pricing/pricing.schemas.js';
import { createRouter, errorResponses, jsonResponse } from '../http/openapi.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { ChainRuntime } from '../chain/chain.runtime.js';
import type { EvmWatches } from '../chains/evm/watch.js';
import type { AccountWatches } from '../chains/account-watch.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock'> & {
  watcherStatus: WatcherStatus;
  chain: ChainRuntime;
  evm: EvmWatches;
  accounts: AccountWatches;
  rates: RateBook;
};

const HealthSchema = z
  .object({
    status: z.literal('ok'),
    mode: z.literal('live'),
    live_payments_enabled: z.boolean().openapi({
      description: 'false while the chain watcher cannot confirm payments (degraded); status stays "ok" because the API still serves. Alert on it.',
    }),
    version: z.string(),
    network: z.string().openapi({ description: 'The TRON network this instance serves', example: 'tron-mainnet' }),
    database_id: z.string().nullable().openapi({
      description:
        'A random id of the database this instance uses, written once when the database was first prepared (the same for every instance on it); `gatewayd chain status` compares it with the database it reads',
      example: '3f9c2a7be01d44c8',
    }),
    watcher: WatcherHealthSchema,
    networks: z.array(NetworkHealthSchema).openapi({
      description: 'Every network this instance watches, its TRON network first, then [[evm.networks]]: its watcher, how far it has read, and its providers',
    }),
    deliveries: z.object({ backlog: z.number().int() }),
    pricing: PricingHealthSchema.openapi({ description: "Fiat prices: each rate source's last rates, their age and its last error" }),
  })
  .openapi('Health');

const ConfigSchema = z
  .object({
    captcha: z.object({ provider: z.enum(['turnstile', 'hcaptcha']), site_key: z.string() }).nullable(),
    google: z.object({ client_id: z.string() }).nullable(),
  })
  .openapi('PublicConfig');

export function systemRoutes(deps: Deps, version: string) {
  const app = createRouter();
  // Written once when the database was prepared: read at the first health check.
  let storedId: Promise<string | null> | undefined;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      description:
        'Unauthenticated. `status` is `ok` while the chain watcher keeps up; the delivery backlog counts pending webhook deliveries; ' +
        "`pricing` shows each fiat rate source's last rates, their age and its last error (no source URL).",
      tags: ['System'],
      summary: 'Liveness, the chain watcher state and the webhook delivery backlog',
      responses: { 200: jsonResponse(HealthSchema, 'The service is up'), ...errorResponses() },
    }),
    async (c) => {
      const backlog = await deps.db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['pending', 'sending'])
        .executeTakeFirstOrThrow();
      return c.json(
        {
          status: 'ok' as const,
          mode: 'live' as const,
          live_payments_enabled: livePayments(deps.watcherStatus).enabled,
          version,
          network: deps.config.network.id,
          database_id: await (storedId ??= databaseId(deps.db)),
          watcher: await watcherHealth(deps),
          networks: await networksHealth(deps),
          deliveries: { backlog: Number(backlog.n) },
          pricing: toPricingHealthResponse(deps.rates, deps.clock.now()),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/config',
      operationId: 'getPublicConfig',
      description:
        'Unauthenticated. What a sign-in or registration form needs: whether a captcha is required (and its site key) and whether Google sign-in is offered.',
      tags: ['System'],
      summary: 'Public client configuration: captcha and external sign-in',
      responses: { 200: jsonResponse(ConfigSchema, 'What a sign-in page needs to know'), ...errorResponses() },
    }),
    (c) => {
      const { captcha, google } = deps.config;
      return c.json(
        {
          captcha: captcha.provider ? { provider: captcha.provider, site_key: captcha.site_key } : null,
          google: google.client_id ? { client_id: google.client_id } : null,
        },
        200,
      );
    },
  );

  return app;
}
