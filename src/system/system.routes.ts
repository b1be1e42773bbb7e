import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../deps.js';
import { createRouter, errorResponses, jsonResponse } from '../http/openapi.js';

const HealthSchema = z
  .object({
    status: z.literal('ok').optional(),
    mode: z.literal('live').optional(),
    live_payments_enabled: z.boolean().optional(),
    version: z.string().optional(),
    watcher: z
      .object({
        state: z.enum(['stopped', 'idle', 'running', 'degraded']),
        lag_seconds: z.number().nullable(),
      })
      .optional(),
    deliveries: z.object({ backlog: z.number().int() }).optional(),
  })
  .openapi('Health');

const ConfigSchema = z
  .object({
    captcha: z.object({ provider: z.enum(['turnstile', 'hcaptcha']), site_key: z.string() }).nullable(),
    google: z.object({ client_id: z.string() }).nullable(),
  })
  .openapi('PublicConfig');

export function systemRoutes(deps: AppDeps, version: string) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/health',
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
          live_payments_enabled: true,
          version,
          watcher: { state: deps.watcherStatus.state, lag_seconds: deps.watcherStatus.lagSeconds },
          deliveries: { backlog: Number(backlog.n) },
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/config',
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
