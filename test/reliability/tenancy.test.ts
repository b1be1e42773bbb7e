/**
 * Tenancy and auth (issue 11) against the real `gatewayd serve`: for every operation that names a
 * resource, another merchant's id is 404 (never 403) and changes nothing; revoked and expired keys
 * are 401 `unauthorized`; a key without the scope is 403 `insufficient_scope`; a key on a
 * session-only operation is 403 `session_required`; a session with a foreign or missing Origin is
 * 403 `invalid_origin`; a non-staff session on the inbox is 403 `support_staff_required`.
 */
import { test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { insertKey, revokeKey } from '../../src/api-keys/api-keys.repo.js';
import { startGateway } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { HttpClient, type HttpResponse } from '../helpers/http.js';
import { prepareDatabase, type PreparedMerchant, reader, sessionClient, Tally, teardown } from './harness.js';

interface Op {
  method: string;
  path: string;
  auth: 'K|S' | 'S' | 'public';
}

test('tenancy and auth: foreign ids, revoked, expired and narrow keys, foreign origins', { timeout: 300_000 }, async () => {
  const tally = new Tally('tenancy');
  const rx = await startHttpsReceiver();
  const prepared = await prepareDatabase(2);
  const [a, b] = prepared.merchants as [PreparedMerchant, PreparedMerchant];
  const setup = openDatabase(prepared.dbPath);
  const now = Date.now();
  const scopes = ['invoices:read', 'invoices:write', 'ledger:read'] as const;
  const revoked = await insertKey(setup.db, a.id, { name: 'revoked', scopes, expiresInDays: null }, now);
  await revokeKey(setup.db, a.id, revoked.key.id, now);
  // Created two days ago with a one-day lifetime: expired yesterday.
  const expired = await insertKey(setup.db, a.id, { name: 'expired', scopes, expiresInDays: 1 }, now - 2 * 86_400_000);
  const ledgerOnly = await insertKey(setup.db, a.id, { name: 'ledger', scopes: ['ledger:read'], expiresInDays: null }, now);
  const readOnly = await insertKey(setup.db, a.id, { name: 'read', scopes: ['invoices:read'], expiresInDays: null }, now);
  await setup.close();

  const gw = await startGateway({
    dir: prepared.dir,
    config: { database: { path: prepared.dbPath }, webhooks: rx.webhookConfig({ timeout_seconds: 2 }), rate_limits: { api_per_key: 0 } },
  });
  const db = reader(prepared.dbPath);
  try {
    const sa = sessionClient(gw.baseUrl, a);
    const sb = sessionClient(gw.baseUrl, b);
    const anon = new HttpClient(gw.baseUrl, null);
    const expect = (res: HttpResponse, status: number, code: string | undefined, what: string) => {
      tally.requests += 1;
      tally.check(
        res.status === status && (code === undefined || res.body?.error?.code === code) && (status < 400 || res.body?.mode === 'live'),
        `${what}: expected ${status} ${code ?? ''}, got ${res.status} ${res.text.slice(0, 160)}`,
      );
    };

    // B's resources, one of each kind.
    const inv = (await sb.post('/invoices', { merchant_order_id: 'b-1', amount: '5', wallet_id: b.walletId }, { headers: { 'idempotency-key': 'b-1' } })).body
      .invoice;
    const ticket = (await sb.post('/support/tickets', { subject: 'B', message: 'B ticket' })).body.ticket;
    const hook = (await sb.post('/webhooks', { url: rx.url('/b') })).body.webhook;
    const delivery = (await sb.post(`/webhooks/${hook.id}/test`, {})).body.deliveries[0];
    const bRows = () =>
      JSON.stringify(db.prepare('SELECT * FROM invoices WHERE merchant_id = ?').all(b.id)) +
      JSON.stringify(db.prepare('SELECT id, name, revoked_at, expires_at FROM api_keys WHERE merchant_id = ?').all(b.id)) +
      JSON.stringify(db.prepare('SELECT id, active FROM webhooks WHERE merchant_id = ?').all(b.id)) +
      JSON.stringify(db.prepare('SELECT id, status, updated_at FROM support_tickets WHERE merchant_id = ?').all(b.id)) +
      JSON.stringify(db.prepare('SELECT COUNT(*) AS n FROM support_messages').get()) +
      JSON.stringify(db.prepare('SELECT id, status, attempts FROM deliveries WHERE merchant_id = ?').all(b.id));
    const bBefore = bRows();

    const doc = (await anon.get('/api/v1/openapi.json')).body;
    const ops: Op[] = [];
    for (const [path, byMethod] of Object.entries<Record<string, { security?: Array<Record<string, unknown>> }>>(doc.paths)) {
      for (const [method, op] of Object.entries(byMethod)) {
        // HEAD is GET without a body (no error code to read): its GET is checked.
        if (method === 'head') continue;
        const sec = (op.security ?? []).flatMap((s) => Object.keys(s));
        ops.push({ method: method.toUpperCase(), path, auth: sec.includes('bearerAuth') ? 'K|S' : sec.includes('sessionCookie') ? 'S' : 'public' });
      }
    }
    const foreignId = (path: string): string | undefined => {
      if (path.startsWith('/api/v1/support/tickets/{id}')) return ticket.id;
      if (path.startsWith('/api/v1/webhooks/deliveries/{id}')) return delivery.id;
      if (path.startsWith('/api/v1/webhooks/{id}')) return hook.id;
      if (path.startsWith('/api/v1/invoices/{id}')) return inv.id;
      if (path.startsWith('/api/v1/api-keys/{id}')) return b.keyId;
      return undefined;
    };
    const bodyFor = (op: Op): unknown =>
      op.method === 'GET' || op.method === 'DELETE'
        ? undefined
        : op.path.endsWith('/review')
          ? { decision: 'accept' }
          : op.path.endsWith('/resolve')
            ? { tx_hash: 'ab'.repeat(32), log_index: 0 }
            : op.path.endsWith('/messages')
              ? { message: 'hi' }
              : op.method === 'PATCH' && op.path.startsWith('/api/v1/webhooks/')
                ? { active: true }
                : {};
    const call = (client: HttpClient, op: Op, path: string, options: Parameters<HttpClient['request']>[3] = {}) =>
      client.request(op.method, path, bodyFor(op), options);

    for (const op of ops) {
      if (op.auth === 'public' || op.path.includes('/support/inbox')) continue;
      const id = foreignId(op.path);
      const path = id ? op.path.replace('{id}', id) : op.path.replace('{id}', 'x');
      // Another tenant's resource: 404 with A's session and, where keys are allowed, A's key.
      if (id) {
        expect(await call(sa, op, path), 404, 'not_found', `${op.method} ${op.path} with another merchant's id (session)`);
        if (op.auth === 'K|S')
          expect(await call(anon, op, path, { bearer: a.key }), 404, 'not_found', `${op.method} ${op.path} with another merchant's id (key)`);
      }
      // A session from a foreign origin, and an unsafe method without Origin.
      expect(await call(sa, op, path, { origin: 'https://evil.example' }), 403, 'invalid_origin', `${op.method} ${op.path} session with a foreign Origin`);
      if (op.method !== 'GET') expect(await call(sa, op, path, { origin: null }), 403, 'invalid_origin', `${op.method} ${op.path} session without Origin`);
      // Dead keys and wrong keys.
      for (const [name, secret] of [
        ['revoked', revoked.secret],
        ['expired', expired.secret],
        ['unknown', 'gw_live_' + 'A'.repeat(43)],
      ] as const) {
        expect(
          await call(anon, op, path, { bearer: secret }),
          op.auth === 'K|S' ? 401 : 403,
          op.auth === 'K|S' ? 'unauthorized' : 'session_required',
          `${op.method} ${op.path} with a ${name} key`,
        );
      }
      if (op.auth === 'S') expect(await call(anon, op, path, { bearer: a.key }), 403, 'session_required', `${op.method} ${op.path} with a valid key`);
      expect(await call(anon, op, path), 401, 'unauthorized', `${op.method} ${op.path} without credentials`);
    }
    // Scopes (docs/api.md, API keys).
    const scopeCases: Array<[string, string, string, number]> = [
      ['GET', '/wallets', ledgerOnly.secret, 403],
      ['GET', '/invoices', ledgerOnly.secret, 403],
      ['GET', `/invoices/${inv.id}`, ledgerOnly.secret, 403],
      ['POST', '/invoices', readOnly.secret, 403],
      ['GET', '/ledger.csv', readOnly.secret, 403],
      ['GET', '/ledger.csv', ledgerOnly.secret, 200],
      ['GET', '/invoices', readOnly.secret, 200],
    ];
    for (const [method, path, secret, status] of scopeCases) {
      const res = await anon.request(method, path, method === 'POST' ? { merchant_order_id: 'scope-1', amount: '1', wallet_id: a.walletId } : undefined, {
        bearer: secret,
        headers: { 'idempotency-key': 'scope-1' },
      });
      expect(res, status, status === 403 ? 'insufficient_scope' : undefined, `${method} ${path} with a key lacking or having the scope`);
    }
    // Listings never show another tenant's rows.
    const lists = [
      await sa.get('/invoices'),
      await anon.get('/invoices', { bearer: a.key }),
      await sa.get('/me'),
      await anon.get('/ledger.csv', { bearer: a.key }),
      await sa.get('/support/tickets'),
      await sa.get('/wallets'),
    ];
    for (const res of lists) {
      tally.requests += 1;
      for (const foreign of [inv.id, ticket.id, hook.id, delivery.id, b.keyId, b.walletId, inv.checkout_token])
        tally.check(!res.text.includes(foreign), `a listing shows another merchant's ${foreign}`);
    }
    // The inbox needs staff status.
    expect(await sa.get('/support/inbox'), 403, 'support_staff_required', 'GET /support/inbox as a non-staff owner');
    expect(await sa.get(`/support/inbox/${ticket.id}`), 403, 'support_staff_required', 'GET /support/inbox/{id} as a non-staff owner');
    expect(
      await anon.get('/support/chat', { headers: { 'x-support-chat-token': 'A'.repeat(43) } }),
      401,
      'unauthorized',
      'GET /support/chat with an unknown token',
    );

    tally.check(bRows() === bBefore, "refused requests changed another merchant's rows");
    // B's own access still works after all that.
    expect(await anon.get(`/invoices/${inv.id}`, { bearer: b.key }), 200, undefined, "B's key reads B's invoice");
    expect(await sb.get(`/support/tickets/${ticket.id}`), 200, undefined, "B's session reads B's ticket");
  } finally {
    await teardown({ dir: prepared.dir, db, gw, servers: [rx] });
  }
  tally.finish();
});
