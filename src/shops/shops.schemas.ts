/** The API contract of shop connections (docs/api.md, Shop connections) and the mappers that build them. */
import { z } from '@hono/zod-openapi';
import { DateTime, INSTANCE_MARK } from '../http/openapi.js';
import { iso, isoOrNull } from '../lib/clock.js';
import { pagingQuery } from '../http/paging.js';
import type { ShopCallback, ShopNotifyView } from './shop-notifies.repo.js';
import type { ShopConnection } from './shops.repo.js';

export const SHOP_PROTOCOLS = ['epay', 'epusdt'] as const;
export const CONNECTION_ID_EXAMPLE = 'shc_Vb7Yk2mN8xP0rT5wZ1aC4d';
const CALLBACK_ID_EXAMPLE = 'snt_Ux3Lm9Qa1Zc7Vb5Nd2Kf8w';

export const CreateShopConnectionBody = z
  .strictObject({
    protocol: z
      .enum(SHOP_PROTOCOLS)
      .openapi({ description: 'epay: Epay V1 shops (V2Board, Xboard, dujiaoka Yipay, new-api); epusdt: Epusdt shops (dujiaoka Epusdt, WHMCS, WooCommerce)' }),
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .openapi({ description: 'Your name for the shop, shown in the console and in the metadata of its invoices', example: 'My dujiaoka shop' }),
    wallet_id: z.string().min(1).max(100).openapi({ description: "The wallet the shop's invoices are paid to", example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g' }),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3,5}$/, 'expected a currency code such as USDT or USD')
      .transform((v) => v.toUpperCase())
      .openapi({
        // The pattern is this instance's: USDT and its pricing.currencies, any case (src/openapi-instance.ts).
        [INSTANCE_MARK]: 'connection_currency',
        description:
          "What the shop's amounts are in: USDT (no conversion) or a fiat currency of [pricing]; upper or lower case, answered in upper case. " +
          "The pattern is this instance's; another currency is 400 `validation_error` naming the accepted ones",
        example: 'USDT',
      }),
    allow_http_notify: z.boolean().optional().openapi({
      description: 'Let the shop receive its callbacks over plain http (many shops run behind http); https only when absent or false',
      example: false,
    }),
  })
  .openapi('CreateShopConnection');

export const ShopConnectionIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: CONNECTION_ID_EXAMPLE }),
});

export const ShopNotifyIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: CALLBACK_ID_EXAMPLE }),
});

export const ShopConnectionSchema = z
  .object({
    id: z.string().openapi({ example: CONNECTION_ID_EXAMPLE }),
    protocol: z.enum(SHOP_PROTOCOLS),
    name: z.string().openapi({ example: 'My dujiaoka shop' }),
    pid: z.number().int().openapi({ description: 'The merchant id (商户ID / PID) an Epay shop is configured with', example: 482913 }),
    api_url: z.string().openapi({
      format: 'uri',
      description: 'What the shop is given as its gateway URL: {public_url}/epay/ for Epay, {public_url} for Epusdt',
      example: 'https://pay.shop.example/epay/',
    }),
    wallet_id: z.string().openapi({ example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g' }),
    currency: z.string().openapi({ example: 'USDT' }),
    allow_http_notify: z.boolean(),
    active: z.boolean().openapi({ description: 'false once deleted' }),
    created_at: DateTime,
  })
  .openapi('ShopConnection');

export const CreatedShopConnectionSchema = z
  .object({
    connection: ShopConnectionSchema,
    key: z.string().openapi({
      description: 'The shared key (商户密钥 / token) the shop signs with. Shown once: paste it into the shop now.',
      example: 'Zt4r8Qm2Vx6Kp0Ln3Wb7Yc1Hd5Fg9Js',
    }),
  })
  .openapi('CreatedShopConnection');

export const ShopConnectionListSchema = z.object({ connections: z.array(ShopConnectionSchema) }).openapi('ShopConnectionList');

/** What a callback shows, in the old notify envelope and in the callbacks list alike. */
const notifyFields = {
  id: z.string().openapi({ example: CALLBACK_ID_EXAMPLE }),
  connection_id: z.string().openapi({ example: CONNECTION_ID_EXAMPLE }),
  invoice_id: z.string(),
  merchant_order_id: z.string().openapi({ description: "The shop's order number (out_trade_no / order_id)" }),
  status: z.enum(['pending', 'sending', 'delivered', 'failed', 'cancelled']),
  attempts: z.number().int().openapi({ description: 'Attempts made so far' }),
  next_attempt_at: DateTime.nullable(),
  delivered_at: DateTime.nullable().openapi({ description: 'When the shop acknowledged it' }),
  last_error: z.string().nullable(),
  response_status: z.number().int().nullable(),
  created_at: DateTime,
};

export const ShopNotifySchema = z.object(notifyFields).openapi('ShopNotify');

export const CallbackAttemptSchema = z
  .object({
    attempt: z.number().int().openapi({ description: 'Its number: 1 for the first', example: 1 }),
    started_at: DateTime,
    duration_ms: z.number().int().openapi({ description: 'How long it took, measured', example: 84 }),
    response_status: z.number().int().nullable().openapi({ description: "The shop's HTTP status; null when nothing came back" }),
    error: z
      .string()
      .nullable()
      .openapi({ description: 'Why it was not acknowledged (the start of what the shop answered, or the network error); null when it was' }),
    retry_after_ms: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The wait the shop's Retry-After asked for on a 429 or 503, capped at the schedule's longest step; else null" }),
    next_attempt_at: DateTime.nullable().openapi({ description: 'When the next attempt was planned after this one; null when none was' }),
  })
  .openapi('CallbackAttempt');

export const ShopCallbackSchema = z
  .object({
    ...notifyFields,
    notify_url: z.string().openapi({ description: 'Where it is sent: the notify URL the shop gave with its order' }),
    attempt_history: z.array(CallbackAttemptSchema).openapi({ description: 'Every attempt made, first to last' }),
  })
  .openapi('ShopCallback');

export const ShopCallbackListSchema = z.object({ callbacks: z.array(ShopCallbackSchema), has_more: z.boolean() }).openapi('ShopCallbackList');
export const ShopCallbackEnvelopeSchema = z.object({ callback: ShopCallbackSchema }).openapi('ShopCallbackEnvelope');

export const CallbackListQuerySchema = z.strictObject(pagingQuery('callback', CALLBACK_ID_EXAMPLE));

export const ShopCallbackParams = z.object({
  id: ShopConnectionIdParam.shape.id,
  callback_id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'callback_id', in: 'path' }, example: CALLBACK_ID_EXAMPLE }),
});

export const ShopNotifyEnvelopeSchema = z.object({ notify: ShopNotifySchema }).openapi('ShopNotifyEnvelope');

/** Where the shop is pointed: the Epay facade's folder, or the instance itself for Epusdt (it appends /api/v1/...). */
export function apiUrlOf(publicUrl: string, protocol: ShopConnection['protocol']): string {
  const base = publicUrl.replace(/\/+$/, '');
  return protocol === 'epay' ? `${base}/epay/` : base;
}

export function toShopConnectionResponse(c: ShopConnection, publicUrl: string): z.infer<typeof ShopConnectionSchema> {
  return {
    id: c.id,
    protocol: c.protocol,
    name: c.name,
    pid: c.pid,
    api_url: apiUrlOf(publicUrl, c.protocol),
    wallet_id: c.walletId,
    currency: c.currency,
    allow_http_notify: c.allowHttpNotify,
    active: c.active,
    created_at: iso(c.createdAt),
  };
}

export function toShopNotifyResponse(n: ShopNotifyView): z.infer<typeof ShopNotifySchema> {
  return {
    id: n.id,
    connection_id: n.connectionId,
    invoice_id: n.invoiceId,
    merchant_order_id: n.outTradeNo,
    status: n.status,
    attempts: n.attempts,
    next_attempt_at: isoOrNull(n.nextAttemptAt),
    delivered_at: isoOrNull(n.deliveredAt),
    last_error: n.lastError,
    response_status: n.responseStatus,
    created_at: iso(n.createdAt),
  };
}

export function toShopCallbackResponse(c: ShopCallback): z.infer<typeof ShopCallbackSchema> {
  return {
    ...toShopNotifyResponse(c),
    notify_url: c.notifyUrl,
    attempt_history: c.history.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.startedAt),
      duration_ms: a.durationMs,
      response_status: a.responseStatus,
      error: a.error,
      retry_after_ms: a.retryAfterMs,
      next_attempt_at: isoOrNull(a.nextAttemptAt),
    })),
  };
}
