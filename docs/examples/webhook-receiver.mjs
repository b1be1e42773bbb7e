// A gatewayd webhook receiver in plain Node (no dependencies): verifies the signature over the raw
// body, rejects stale timestamps and handles each event once. Run: WEBHOOK_SECRET=whsec_... node webhook-receiver.mjs
// During a secret roll, set WEBHOOK_SECRET to the new secret at any time: old and new both verify.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const SECRET = process.env.WEBHOOK_SECRET; // whsec_... as shown when you registered the webhook
const TOLERANCE_SECONDS = 300;
// Optional: a folder where the last delivery is kept as it arrived, to verify it by hand (README):
// body.json (the raw body, byte for byte), TIMESTAMP and SIGNATURE (the two headers).
const CAPTURE_DIR = process.env.CAPTURE_DIR;
const processed = new Set(); // use a table with a unique key on the event id in production

/**
 * Whether one of the values in `header` is "sha256=" + hex HMAC-SHA256 of `timestamp + "." + rawBody`,
 * and the timestamp is fresh. The header holds one value, or two ("sha256=<new>,sha256=<old>") for
 * 24 hours after the secret was rolled: accept the delivery when any value matches your secret.
 */
function verifySignature(secret, timestamp, header, rawBody, nowSeconds = Date.now() / 1000) {
  if (typeof timestamp !== 'string' || typeof header !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex'));
  return header.split(',').some((value) => {
    // Compare bytes, never characters: a header with multi-byte characters can have the expected
    // length in characters but not in bytes, and timingSafeEqual throws on unequal lengths.
    const given = Buffer.from(value.trim(), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // the raw bytes, before any JSON parsing
    if (CAPTURE_DIR && req.method === 'POST') {
      writeFileSync(join(CAPTURE_DIR, 'body.json'), raw);
      writeFileSync(join(CAPTURE_DIR, 'TIMESTAMP'), String(req.headers['x-gateway-timestamp'] ?? ''));
      writeFileSync(join(CAPTURE_DIR, 'SIGNATURE'), String(req.headers['x-gateway-signature'] ?? ''));
    }
    if (!verifySignature(SECRET, req.headers['x-gateway-timestamp'], req.headers['x-gateway-signature'], raw)) {
      return res.writeHead(401).end(); // invalid or stale signature
    }
    const event = JSON.parse(raw.toString('utf8'));
    if (!processed.has(event.id)) {
      processed.add(event.id); // persist first, then answer
      console.log('verified', event.type, event.data?.invoice?.id ?? '', event.data?.invoice?.status ?? '');
      // For invoice events: fetch GET /api/v1/invoices/{id} with a server API key and reconcile
      // before fulfilling the order, once.
    }
    res.writeHead(200).end(); // any 2xx acknowledges; 503 asks for a retry
  });
});

server.listen(Number(process.env.PORT ?? 3000), () => console.log(`listening on ${server.address().port}`));
