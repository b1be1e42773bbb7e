/**
 * Webhook signatures (docs/api.md, Webhooks: receiving events): `X-Gateway-Signature` is
 * `sha256=` + lowercase hex HMAC-SHA256, keyed by the whole `whsec_...` secret as UTF-8, over
 * `timestamp + "." + raw body`, where timestamp is `X-Gateway-Timestamp` (Unix seconds).
 */
import { hmacSha256Hex, randomToken } from '../lib/crypto.js';
import { VERSION } from '../version.js';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomToken(32)}`;
}

export function signatureFor(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${hmacSha256Hex(Buffer.from(secret, 'utf8'), `${timestamp}.${rawBody}`)}`;
}

/**
 * The headers of one attempt; called afresh for every attempt so each carries its own timestamp.
 * While a secret roll is in progress the signature header holds two values, the new secret's first
 * (`sha256=<new>,sha256=<old>`); otherwise exactly one, as before rolls existed.
 */
export function deliveryHeaders(input: {
  secret: string;
  previousSecret?: string | null;
  eventId: string;
  deliveryId: string;
  attempt: number;
  nowMs: number;
  rawBody: string;
}): Record<string, string> {
  const timestamp = String(Math.floor(input.nowMs / 1000));
  const signatures = [input.secret, ...(input.previousSecret ? [input.previousSecret] : [])].map((s) => signatureFor(s, timestamp, input.rawBody));
  return {
    'content-type': 'application/json',
    'user-agent': `gatewayd/${VERSION}`,
    'x-gateway-event-id': input.eventId,
    'x-gateway-delivery-id': input.deliveryId,
    'x-gateway-attempt': String(input.attempt),
    'x-gateway-timestamp': timestamp,
    'x-gateway-signature': signatures.join(','),
  };
}
