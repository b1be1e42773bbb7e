/**
 * Hostile input (issue 11): requests generated from the served /api/v1/openapi.json hit every
 * operation of the real `gatewayd serve` process, with and without credentials. Every answer must
 * be a status documented for that operation, errors in the envelope, never a 5xx, and a refused
 * request must leave the database as it was (checksum of every table before and after).
 */
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { openDatabase } from '../../src/db/database.js';
import { insertKey, revokeKey } from '../../src/api-keys/api-keys.repo.js';
import { freePort, startGateway } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { HttpClient } from '../helpers/http.js';
import { checkNoUnhandledErrors, prepareDatabase, type PreparedMerchant, reader, SEED, sessionClient, size, Tally, teardown } from './harness.js';
import { hostileRequestArb, operationsOf, resolver, sendRequest, systematicRequests, type Schema } from './openapi-fuzz.js';
import { documentValidator } from '../helpers/openapi-validator.js';

/**
 * A sent body as a validator reads it: its JSON value, its text when it is not JSON, undefined when
 * empty. Decoded as the server decodes it (a leading byte order mark dropped, which RFC 8259 lets a
 * parser ignore).
 */
function parsedBody(bytes: Uint8Array | undefined): unknown {
  if (!bytes || bytes.length === 0) return undefined;
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
import type { Sqlite } from '../../src/db/database.js';

/**
 * Columns that legitimately change without a request changing state: background delivery and
 * watcher progress, and "last used" bookkeeping of a credential that was presented.
 */
const VOLATILE: Record<string, Set<string>> = {
  deliveries: new Set(['status', 'attempts', 'next_attempt_at', 'delivered_at', 'last_error', 'response_status', 'updated_at']),
  chain_cursors: new Set(['covered_until', 'updated_at']),
  api_keys: new Set(['last_used_at']),
  sessions: new Set(['last_used_at', 'expires_at']),
};

function checksum(db: Sqlite): string {
  const h = createHash('sha256');
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>;
  for (const { name } of tables) {
    const volatile = VOLATILE[name];
    h.update(`#${name}`);
    // A WITHOUT ROWID table (invoice_stats) is ordered by its primary key, which is its first columns.
    const withoutRowid = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(name) as { sql: string }).sql.includes('WITHOUT ROWID');
    for (const row of db.prepare(`SELECT * FROM "${name}" ORDER BY ${withoutRowid ? '1, 2' : 'rowid'}`).iterate() as Iterable<Record<string, unknown>>) {
      for (const [k, v] of Object.entries(row)) if (!volatile?.has(k)) h.update(`${k}=${String(v)};`);
    }
  }
  return h.digest('hex');
}

// 503s that say a dependency is missing (mail, captcha, identity provider, support staff, exchange rates, the
// Telegram bot, a TRON provider for the payer's own lookup), never a crash.
const DEPENDENCY_CODES = new Set([
  'email_unavailable',
  'captcha_unavailable',
  'identity_provider_unavailable',
  'support_unavailable',
  'rate_unavailable',
  'telegram_unavailable',
  'chain_unavailable',
]);
// HEAD answers carry no body, so no code: these are the GETs that answer a dependency's 503 here (no bot token).
const DEPENDENCY_HEADS = /^\/api\/v1\/me\/telegram$/;

function isEnvelope(body: unknown): boolean {
  const b = body as { error?: { code?: unknown; message?: unknown }; mode?: unknown } | undefined;
  return typeof b === 'object' && b !== null && b.mode === 'live' && typeof b.error?.code === 'string' && typeof b.error?.message === 'string';
}

test('hostile input: generated from the served OpenAPI document, against every operation', { timeout: 600_000 }, async () => {
  const tally = new Tally('hostile');
  const rx = await startHttpsReceiver();
  const prepared = await prepareDatabase(3);
  const [a, b, staff] = prepared.merchants as [PreparedMerchant, PreparedMerchant, PreparedMerchant];
  // A revoked key of merchant A.
  const setup = openDatabase(prepared.dbPath);
  const { key: revoked, secret: revokedSecret } = await insertKey(
    setup.db,
    a.id,
    { name: 'old', scopes: ['invoices:read', 'invoices:write', 'ledger:read'], expiresInDays: null },
    Date.now(),
  );
  await revokeKey(setup.db, a.id, revoked.id, Date.now());
  await setup.close();

  const gw = await startGateway({
    dir: prepared.dir,
    config: {
      database: { path: prepared.dbPath },
      webhooks: rx.webhookConfig({ timeout_seconds: 2 }),
      support: { staff_emails: [staff.email] },
      // Sign-in and public limits off so generated bodies reach validation and the services;
      // the per-key limit stays on (429 must then be a documented answer too).
      rate_limits: { auth_per_ip: 0, auth_per_email: 0, public_per_ip: 0 },
      tron: { api_url: `http://127.0.0.1:${await freePort()}` },
    },
  });
  const db = reader(prepared.dbPath);
  try {
    const sa = sessionClient(gw.baseUrl, a);
    const sb = sessionClient(gw.baseUrl, b);
    // Resources of A (its own ids) and of B (another tenant's ids) for the path parameters.
    const ids: string[] = [a.keyId, a.walletId];
    const foreignIds: string[] = [b.keyId, b.walletId];
    for (const [client, m, list] of [
      [sa, a, ids],
      [sb, b, foreignIds],
    ] as const) {
      const inv = await client.post(
        '/invoices',
        { merchant_order_id: 'seed-1', amount: '10', wallet_id: m.walletId },
        { headers: { 'idempotency-key': 'seed-1' } },
      );
      const ticket = await client.post('/support/tickets', { subject: 'Hello', message: 'Seed ticket' });
      const hook = await client.post('/webhooks', { url: rx.url('/fuzz') });
      const tested = await client.post(`/webhooks/${hook.body.webhook.id}/test`, {});
      list.push(inv.body.invoice.id, inv.body.invoice.checkout_token, ticket.body.ticket.id, hook.body.webhook.id, tested.body.deliveries[0].id);
    }
    const chat = await new HttpClient(gw.baseUrl, null).post('/support/chat', { message: 'hi', name: 'Visitor', email: 'v@example.test' });
    const chatToken = chat.body.chat_token as string;

    const doc = (await new HttpClient(gw.baseUrl, null).get('/api/v1/openapi.json')).body as Schema;
    const ops = operationsOf(doc).filter((o) => !o.path.endsWith('/openapi.json'));
    const resolve = resolver(doc);
    const validator = documentValidator(doc);
    const perOp = size(60, 260);
    const total = Math.max(perOp * ops.length, size(1500, 10_000));
    const security = doc.paths as Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
    const systematic = systematicRequests(ops, resolve, { ids }, SEED, (op) => {
      const sec = (security[op.path]![op.method.toLowerCase()]!.security ?? []).flatMap((x) => Object.keys(x));
      return sec.includes('bearerAuth') ? 'bearer' : sec.includes('sessionCookie') ? (op.path.includes('/inbox') ? 'staff' : 'session') : 'none';
    });
    const creds = {
      session: a.sessionToken,
      otherTenantSession: b.sessionToken,
      staffSession: staff.sessionToken,
      key: a.key,
      revokedKey: revokedSecret,
      chatToken,
    };
    const samples = [...systematic, ...fc.sample(hostileRequestArb(ops, resolve, { ids, foreignIds }), { seed: SEED, numRuns: total })];
    const seenOps = new Map<string, number>();

    let before = checksum(db);
    for (const req of samples) {
      const { status, body, text, headers } = await sendRequest(gw.baseUrl, req, creds);
      tally.requests += 1;
      const label = `${req.op.method} ${req.op.path} auth=${req.auth} twist=${req.twist} params=${JSON.stringify(req.pathParams).slice(0, 80)}`;
      seenOps.set(`${req.op.method} ${req.op.path}`, (seenOps.get(`${req.op.method} ${req.op.path}`) ?? 0) + 1);
      // The only 5xx allowed: 503 naming an unavailable dependency (documented for some operations).
      const code = (body as { error?: { code?: string } } | undefined)?.error?.code ?? '';
      tally.check(
        status < 500 || (status === 503 && (DEPENDENCY_CODES.has(code) || (req.op.method === 'HEAD' && DEPENDENCY_HEADS.test(req.op.path)))),
        `${label}: ${status} ${text.slice(0, 200)}`,
      );
      tally.check(req.op.statuses.has(status), `${label}: undocumented status ${status} ${text.slice(0, 160)}`);
      // Every answer matches its own schema, and nothing outside the document is accepted (issue 42).
      for (const problem of validator.response(req.op.method, req.op.path, status, body, headers.get('content-type')))
        tally.check(false, `${label}: answer ${problem}: ${text.slice(0, 160)}`);
      if (status < 300) {
        const problems = validator.request(req.op.method, req.op.path, { path: req.pathParams, query: [], headers: req.headers, body: parsedBody(req.body) });
        tally.check(problems.length === 0, `${label}: ${status}, but the request is outside the document: ${problems.slice(0, 3).join('; ')}`);
      }
      // HEAD answers carry no body at all.
      if (status >= 400 && req.op.method !== 'HEAD') tally.check(isEnvelope(body), `${label}: ${status} without the error envelope: ${text.slice(0, 160)}`);
      if (gw.child.exitCode !== null) {
        tally.check(false, `${label}: gatewayd exited (${gw.child.exitCode}): ${gw.output().slice(-600)}`);
        break;
      }
      const after = checksum(db);
      if (status >= 400) tally.check(after === before, `${label}: refused with ${status} but the database changed`);
      else tally.count('accepted');
      before = after;
    }
    for (const op of ops) tally.check((seenOps.get(`${op.method} ${op.path}`) ?? 0) > 0, `${op.method} ${op.path} never exercised`);

    // A wrong method on every known path: 405 in the envelope, nothing changed.
    for (const path of new Set(ops.map((o) => o.path))) {
      const used = new Set(ops.filter((o) => o.path === path).map((o) => o.method));
      const method = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !used.has(m))!;
      const res = await sa.request(method, path.replace(/\{[^}]+\}/g, 'x'), method === 'GET' ? undefined : {});
      tally.requests += 1;
      tally.check(res.status === 405 && isEnvelope(res.body), `${method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    tally.check(checksum(db) === before, 'wrong methods changed the database');
    tally.count('operations', ops.length);
    checkNoUnhandledErrors(tally, gw.output());
  } finally {
    await teardown({ dir: prepared.dir, db, gw, servers: [rx] });
  }
  tally.finish();
});
