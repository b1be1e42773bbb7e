/**
 * The document declares every status the server sends, and requires every property the server
 * always sends. Every operation of the served document (HEAD included) gets the reliability suite's
 * requests: every body twist with the credentials it accepts, then each way a credential can be
 * wrong (none, an unknown key, a foreign Origin, an API key where a session is needed), each with
 * and without an unknown query parameter. An answer whose status the operation does not declare
 * fails the test; so does a property present in every observed answer of a schema but optional in it.
 * New routes are walked without any change here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { startTestApp } from '../helpers/app.js';
import { cookieName } from '../../src/http/auth.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { createInvoice, newKey, shop } from '../helpers/shop.js';
import {
  operationsOf,
  resolver,
  sendRequest,
  systematicRequests,
  type AuthKind,
  type HostileRequest,
  type Operation,
  type Schema,
} from '../reliability/openapi-fuzz.js';

const SEED = 30;
const STAFF = 'staff@example.test';
/** Run last, in this order: they delete or roll what later requests use, or end the session. */
const LAST = [/^DELETE |\/roll/, /password/, /logout/];
const rank = (op: { method: string; path: string }) => LAST.findIndex((re) => re.test(`${op.method} ${op.path}`)) + 1;

type Observed = Map<string, { total: number; present: Map<string, number>; required: Set<string> }>;

/** Records, per object schema, how often each declared property was present in the answers. */
function observe(doc: Schema, schema: Schema | undefined, value: unknown, where: string, seen: Observed): void {
  if (!schema || value === null || value === undefined) return;
  const resolve = resolver(doc);
  const name = typeof schema.$ref === 'string' ? schema.$ref.split('/').pop()! : where;
  const s = resolve(schema);
  const alternatives = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (alternatives) {
    // The alternative the value is: by its discriminator, else the first whose required keys it has.
    const tag = (s.discriminator as { propertyName?: string; mapping?: Record<string, string> } | undefined) ?? undefined;
    const record = value as Record<string, unknown>;
    const chosen =
      tag?.propertyName && tag.mapping?.[String(record[tag.propertyName])]
        ? { $ref: tag.mapping[String(record[tag.propertyName])] }
        : alternatives.find((alt) => {
            const r = resolve(alt);
            if (r.type === 'null') return false;
            return ((r.required as string[] | undefined) ?? []).every((k) => typeof value === 'object' && k in (value as object));
          });
    observe(doc, chosen, value, where, seen);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) observe(doc, s.items as Schema | undefined, item, `${name}[]`, seen);
    return;
  }
  if (typeof value !== 'object' || !s.properties) return;
  const record = value as Record<string, unknown>;
  const entry = seen.get(name) ?? { total: 0, present: new Map(), required: new Set((s.required as string[] | undefined) ?? []) };
  seen.set(name, entry);
  entry.total += 1;
  for (const [key, prop] of Object.entries(s.properties as Record<string, Schema>)) {
    if (!(key in record)) continue;
    entry.present.set(key, (entry.present.get(key) ?? 0) + 1);
    observe(doc, prop, record[key], `${name}.${key}`, seen);
  }
}

test('every answer of every operation is a declared status, and every always-sent property is required', { timeout: 300_000 }, async () => {
  const rx = await startHttpsReceiver();
  const t = await startTestApp({
    config: {
      server: { public_url: 'https://pay.shop.test' },
      webhooks: rx.webhookConfig({ timeout_seconds: 2 }),
      rate_limits: { auth_per_ip: 0, auth_per_email: 0, public_per_ip: 0 },
      support: { staff_emails: [STAFF] },
    },
  });
  try {
    const a = await shop(t);
    const b = await shop(t);
    const key = await newKey(a.client);
    const revoked = await newKey(a.client, { name: 'old' });
    assert.equal((await a.client.delete(`/api-keys/${revoked.id}`)).status, 200);
    const invoice = await createInvoice(a.client, { amount: '10', wallet_id: a.walletId });
    const hook = await a.client.post('/webhooks', { url: rx.url('/walk') });
    const tested = await a.client.post(`/webhooks/${hook.body.webhook.id}/test`);
    const ticket = await a.client.post('/support/tickets', { subject: 'Hello', message: 'A question' });
    const staff = await signedInMerchant(t, { email: STAFF });
    const chat = await t.client({ origin: null }).post('/support/chat', { message: 'hi', name: 'Visitor', email: 'visitor@example.test' });
    assert.equal(chat.status, 201, chat.text);
    const ids = [
      a.walletId,
      key.id,
      invoice.body.invoice.id,
      invoice.body.invoice.checkout_token,
      hook.body.webhook.id,
      tested.body.deliveries[0].id,
      ticket.body.ticket.id,
    ];
    // On an https public_url the session cookie is __Host-gw_session.
    const sessionCookie = cookieName(t.config, SESSION_COOKIE);
    const creds = {
      session: a.client.cookies.get(sessionCookie)!,
      otherTenantSession: b.client.cookies.get(sessionCookie)!,
      staffSession: staff.client.cookies.get(sessionCookie)!,
      cookieName: sessionCookie,
      key: key.secret,
      revokedKey: revoked.secret,
      chatToken: chat.body.chat_token as string,
      origin: t.config.publicOrigin,
    };

    const docRes = await t.client().get('/openapi.json');
    const doc = docRes.body as Schema;
    const paths = doc.paths as Record<string, Record<string, Schema>>;
    const ops = operationsOf(doc).sort((x, y) => rank(x) - rank(y));
    const schemesOf = (op: Operation) =>
      ((paths[op.path]![op.method.toLowerCase()]!.security as Array<Record<string, unknown>> | undefined) ?? []).flatMap((x) => Object.keys(x));
    const accepted = (op: Operation): AuthKind =>
      schemesOf(op).includes('bearerAuth') ? 'bearer' : schemesOf(op).includes('sessionCookie') ? (op.path.includes('/inbox') ? 'staff' : 'session') : 'none';
    // The chat's token travels in a header of its own (sendRequest puts the real one in).
    const withChatToken = (op: Operation, req: HostileRequest): HostileRequest =>
      schemesOf(op).includes('supportChatToken') ? { ...req, headers: { ...req.headers, 'x-support-chat-token': 'reused-key-1' } } : req;
    const resolve = resolver(doc);

    // Per operation: the body twists first, then the wrong credentials, each with and without junk in the query.
    const requests: Array<{ req: HostileRequest; query: string }> = [];
    for (const op of ops) {
      for (const req of systematicRequests([op], resolve, { ids }, SEED, accepted)) requests.push({ req: withChatToken(op, req), query: '' });
      const plain = withChatToken(op, systematicRequests([op], resolve, { ids }, SEED, accepted)[0]!);
      for (const auth of ['none', 'bearer_junk', 'bearer_revoked', 'session_foreign_origin', 'session_no_origin', 'bearer', 'session'] as AuthKind[])
        for (const query of ['', '?unexpected_parameter=1']) requests.push({ req: { ...plain, auth }, query });
    }

    const undeclared: string[] = [];
    const seen: Observed = new Map();
    const statuses = new Map<string, Set<number>>();
    for (const { req, query } of requests) {
      const res = await sendRequest(t.baseUrl, req, creds, query);
      const label = `${req.op.method} ${req.op.path}`;
      (statuses.get(label) ?? statuses.set(label, new Set()).get(label)!).add(res.status);
      if (!req.op.statuses.has(res.status)) undeclared.push(`${label} auth=${req.auth} twist=${req.twist}${query}: ${res.status} ${res.text.slice(0, 120)}`);
      if (res.status === 401) assert.ok(res.headers.get('www-authenticate'), `${label}: a 401 names its challenge`);
      const response = (paths[req.op.path]![req.op.method.toLowerCase()]!.responses as Record<string, Schema>)[String(res.status)];
      const schema = (response?.content as Record<string, { schema: Schema }> | undefined)?.['application/json']?.schema;
      if (res.status < 300 && req.op.method !== 'HEAD') observe(doc, schema, res.body, `${label} ${res.status}`, seen);
    }
    assert.deepEqual([...new Set(undeclared)], [], 'every status sent is declared');
    // The walk got past the credential checks of every operation.
    for (const op of ops) {
      const label = `${op.method} ${op.path}`;
      assert.ok(
        [...statuses.get(label)!].some((s) => s !== 401 && s !== 403 && s !== 405),
        `${label} got past the credentials: ${[...statuses.get(label)!]}`,
      );
    }
    const optionalButAlwaysSent: string[] = [];
    for (const [name, entry] of seen)
      for (const [key, count] of entry.present)
        if (count === entry.total && !entry.required.has(key) && entry.total >= 1) optionalButAlwaysSent.push(`${name}.${key} (${count}/${entry.total})`);
    assert.deepEqual(
      optionalButAlwaysSent.filter((p) => !SOMETIMES_ABSENT.has(p.split(' ')[0]!)),
      [],
      'properties sent in every answer are required',
    );
    assert.ok(seen.get('Invoice') && seen.get('Health') && seen.get('ApiKey') && seen.get('Webhook') && seen.get('Delivery'), `observed: ${[...seen.keys()]}`);
  } finally {
    await t.close();
    await rx.close();
  }
});

/**
 * Optional on purpose: absent in some answers the walk does not produce (documented per field).
 * Invoice.description is absent when the invoice has none; the inbox-only fields of a ticket appear
 * for support staff only; the transaction of an invoice event only once it is paid.
 */
const SOMETIMES_ABSENT = new Set<string>(['Invoice.description', 'CheckoutInvoice.description', 'InvoiceEventData.transaction']);
