/**
 * Request generators driven by the served OpenAPI document (fast-check): for each operation, a
 * body that mostly follows its schema, then one hostile twist (a missing or unknown field, a wrong
 * type, an oversized or boundary value, a body that is not JSON, not UTF-8, too deep or too large,
 * a wrong Content-Type), hostile path parameters and headers, and a choice of credentials.
 */
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

export interface Operation {
  method: string;
  /** Path template, e.g. /api/v1/invoices/{id}. */
  path: string;
  /** Documented response statuses. */
  statuses: Set<number>;
  params: Array<{ name: string; in: string; required: boolean; schema: Schema }>;
  body: Schema | undefined;
}

export type AuthKind =
  'none' | 'session' | 'session_foreign_origin' | 'session_no_origin' | 'bearer' | 'bearer_junk' | 'bearer_revoked' | 'staff' | 'other_tenant';

export interface HostileRequest {
  op: Operation;
  auth: AuthKind;
  /** What was done to the request, for the violation report. */
  twist: string;
  pathParams: Record<string, string>;
  headers: Record<string, string>;
  /** undefined = no body. */
  body: Uint8Array | undefined;
  contentType: string | undefined;
}

export function operationsOf(doc: Schema): Operation[] {
  const ops: Operation[] = [];
  const paths = doc.paths as Record<string, Record<string, Schema>>;
  for (const [path, byMethod] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      const rb = op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        statuses: new Set(Object.keys(op.responses as Schema).map(Number)),
        params: ((op.parameters as Operation['params'] | undefined) ?? []).map((p) => ({ ...p, required: Boolean(p.required) })),
        body: rb?.content?.['application/json']?.schema,
      });
    }
  }
  return ops;
}

/** Resolves `$ref`s against the document. */
export function resolver(doc: Schema): (s: Schema) => Schema {
  const schemas = (doc.components as { schemas: Record<string, Schema> }).schemas;
  return (s) => {
    let cur = s;
    while (typeof cur.$ref === 'string') cur = schemas[cur.$ref.replace('#/components/schemas/', '')]!;
    return cur;
  };
}

const WEIRD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF\uD800',
  '\u202Eevil',
  '𝖀𝖘𝖉𝖙',
  '٠١٢',
  '<script>alert(1)</script>',
  "'; DROP TABLE invoices; --",
  '${7*7}{{7*7}}',
  '../../etc/passwd',
  '%00%ff',
  '=HYPERLINK("x")',
  'null',
  'true',
  '1e400',
  '-0',
  '0x10',
  '1.0000001',
  '999999999999999999999999',
  '00.1',
  ' 1.5',
  '1,5',
  '+1',
  'NaN',
  'Infinity',
];

const WEIRD_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, -0, 1e308, -1e308, 2 ** 53 + 1, [], {}, [1, 'a'], { a: { b: null } }, '', 'x'.repeat(5000)];

function stringArb(s: Schema): fc.Arbitrary<string> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as string[]));
  if (typeof s.const === 'string') return fc.constant(s.const);
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : 64;
  const options: Array<fc.Arbitrary<string>> = [];
  if (typeof s.pattern === 'string') {
    try {
      options.push(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= max));
    } catch {
      /* a pattern JS cannot compile: plain strings only */
    }
  }
  if (s.format === 'email') options.push(fc.emailAddress().filter((v) => v.length <= max));
  if (s.format === 'uri') options.push(fc.webUrl({ withQueryParameters: true }));
  options.push(fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, 40)), unit: 'grapheme' }));
  // Boundaries: exactly the shortest and the longest accepted.
  options.push(fc.constant('a'.repeat(min)), fc.constant('b'.repeat(Math.min(max, 20_000))));
  return fc.oneof(...options);
}

/** A value that mostly satisfies the schema (boundaries included). */
export function validish(s0: Schema, resolve: (s: Schema) => Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(s0);
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alts) return fc.oneof(...alts.map((a) => validish(a, resolve, depth + 1)));
  const type = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string | undefined];
  if (type.length > 1) return fc.oneof(...type.map((t) => validish({ ...s, type: t }, resolve, depth + 1)));
  switch (type[0]) {
    case 'string':
      return stringArb(s);
    case 'integer': {
      const min = typeof s.minimum === 'number' ? s.minimum : -1000;
      const max = typeof s.maximum === 'number' ? s.maximum : 1000;
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 3 ? fc.constant([]) : fc.array(validish((s.items as Schema) ?? {}, resolve, depth + 1), { maxLength: 4 });
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      if (Object.keys(props).length === 0) {
        return s.additionalProperties === false ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = validish(v, resolve, depth + 1);
      return fc.record(model, { requiredKeys: [...required] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

type Twist = { name: string; apply: (body: unknown, r: () => number) => { bytes: Uint8Array | undefined; contentType: string | undefined } };

const enc = new TextEncoder();
const json = (v: unknown) => ({ bytes: enc.encode(JSON.stringify(v)), contentType: 'application/json' });
function pick<T>(list: readonly T[], r: () => number): T {
  return list[Math.floor(r() * list.length)]!;
}
function mutateField(body: unknown, r: () => number, value: (key: string) => unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const keys = Object.keys(body);
  if (keys.length === 0) return { [pick(['amount', 'x', '__proto__', 'constructor'], r)]: value('x') };
  const key = pick(keys, r);
  return { ...body, [key]: value(key) };
}

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Ways to spoil a body; 'as_is' keeps it (it may still be refused, or accepted). */
export const TWISTS: Twist[] = [
  { name: 'as_is', apply: (b) => json(b) },
  {
    name: 'drop_field',
    apply: (b, r) => {
      if (!b || typeof b !== 'object' || Array.isArray(b)) return json(b);
      const copy = { ...(b as Record<string, unknown>) };
      const keys = Object.keys(copy);
      if (keys.length > 0) delete copy[pick(keys, r)];
      return json(copy);
    },
  },
  { name: 'unknown_field', apply: (b) => json(b && typeof b === 'object' && !Array.isArray(b) ? { ...b, unexpected_field: 1 } : b) },
  {
    name: 'proto_field',
    apply: (b) => ({ bytes: enc.encode(JSON.stringify(b).replace(/^\{/, '{"__proto__":{"admin":true},')), contentType: 'application/json' }),
  },
  { name: 'wrong_type', apply: (b, r) => json(mutateField(b, r, () => pick(WEIRD_VALUES, r))) },
  { name: 'weird_string', apply: (b, r) => json(mutateField(b, r, () => pick(WEIRD_STRINGS, r))) },
  { name: 'oversized_string', apply: (b, r) => json(mutateField(b, r, () => 'x'.repeat(pick([101, 121, 256, 1001, 2049, 5001, 16_385, 40_000], r)))) },
  {
    name: 'deep_nesting',
    apply: (b, r) => ({
      bytes: enc.encode(JSON.stringify(mutateField(b, r, () => '@@DEEP@@')).replace('"@@DEEP@@"', nested(pick([100, 5_000, 30_000], r)))),
      contentType: 'application/json',
    }),
  },
  {
    // Deep nesting inside every free-form object of the body (e.g. invoice metadata), where it passes the type check.
    name: 'deep_inside_objects',
    apply: (b, r) => {
      const depth = pick([33, 1_000, 8_000, 30_000], r);
      if (!b || typeof b !== 'object' || Array.isArray(b)) return json(b);
      const marked = Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) ? { deep: '@@DEEP@@' } : v]));
      if (!Object.values(marked).some((v) => v && typeof v === 'object')) marked.metadata = { deep: '@@DEEP@@' };
      return { bytes: enc.encode(JSON.stringify(marked).replaceAll('"@@DEEP@@"', nested(depth))), contentType: 'application/json' };
    },
  },
  { name: 'not_an_object', apply: (_b, r) => json(pick([[], 'text', 42, null, true, [{}]], r)) },
  {
    name: 'malformed_json',
    apply: (b, r) => ({
      bytes: enc.encode(
        pick(['{', '{"a":', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', 'undefined', '\uFEFF' + JSON.stringify(b), JSON.stringify(b).slice(0, -1)], r),
      ),
      contentType: 'application/json',
    }),
  },
  {
    name: 'invalid_utf8',
    apply: (b) => {
      const text = JSON.stringify(b);
      const at = Math.max(1, text.indexOf('"', 2) + 1);
      const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(at))]);
      return { bytes, contentType: 'application/json' };
    },
  },
  { name: 'latin1_body', apply: (b) => ({ bytes: Buffer.from(JSON.stringify(b), 'latin1'), contentType: 'application/json; charset=iso-8859-1' }) },
  {
    name: 'wrong_content_type',
    apply: (b, r) => ({
      bytes: enc.encode(JSON.stringify(b)),
      contentType: pick(
        ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'json', ''],
        r,
      ),
    }),
  },
  { name: 'no_content_type', apply: (b) => ({ bytes: enc.encode(JSON.stringify(b)), contentType: undefined }) },
  { name: 'form_body', apply: () => ({ bytes: enc.encode('a=1&b=2'), contentType: 'application/x-www-form-urlencoded' }) },
  { name: 'oversized_body', apply: (b, r) => json(mutateField(b, r, () => 'y'.repeat(70_000))) },
  { name: 'empty_body', apply: () => ({ bytes: new Uint8Array(0), contentType: 'application/json' }) },
  { name: 'duplicate_keys', apply: (b) => ({ bytes: enc.encode(JSON.stringify(b).replace(/^\{/, '{"name":1,"name":"x",')), contentType: 'application/json' }) },
  {
    name: 'huge_numbers',
    apply: (b, r) => ({
      bytes: enc.encode(
        JSON.stringify(mutateField(b, r, () => '@@N@@')).replace(
          '"@@N@@"',
          pick(['1e999', '-1e999', '123456789012345678901234567890', '0.0000000000000000001', '-0', '1E+2'], r),
        ),
      ),
      contentType: 'application/json',
    }),
  },
];

// No '..' or '%2e%2e': URL parsing removes dot segments before the request leaves the client.
const PATH_JUNK = [
  '%',
  '%FF',
  '%00',
  '...',
  '%2e%2e%2f',
  '.%2e.',
  '%C0%AF',
  'a%2Fb',
  '%F0%9F%92%A9',
  '\u00e9',
  ' ',
  '%20',
  'null',
  '0',
  '-1',
  "'",
  '*',
  '%25',
  '%u0041',
  ';x',
  'x%3Fy%3D1',
  'x%23y',
];

/** The credentials, path values, headers and body of one hostile request. */
export function hostileRequestArb(
  ops: Operation[],
  resolve: (s: Schema) => Schema,
  known: { ids: string[]; foreignIds: string[] },
): fc.Arbitrary<HostileRequest> {
  const authArb = fc.constantFrom<AuthKind>(
    'none',
    'session',
    'session',
    'session_foreign_origin',
    'session_no_origin',
    'bearer',
    'bearer',
    'bearer_junk',
    'bearer_revoked',
    'staff',
    'other_tenant',
  );
  const pathValueArb = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known.ids) },
    { weight: 2, arbitrary: fc.constantFrom(...known.foreignIds) },
    { weight: 2, arbitrary: fc.constantFrom(...PATH_JUNK) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map((s) => encodeURIComponent(s)) },
    { weight: 1, arbitrary: fc.constantFrom(101, 201, 3000).map((n) => 'k'.repeat(n)) },
  );
  const headerArb = fc.oneof(
    fc.constant<string | undefined>(undefined),
    fc.string({ minLength: 1, maxLength: 40 }).filter((s) => /^[\x20-\x7E]+$/.test(s) && s.trim() === s),
    fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(4000), 'caf\u00e9', '\u00ff\u00fe', 'a\tb'),
  );
  return fc
    .record({
      op: fc.constantFrom(...ops),
      auth: authArb,
      twistIndex: fc.nat(TWISTS.length * 2 - 1),
      seed: fc.integer(),
      pathValue: pathValueArb,
      header: headerArb,
      reuse: fc.boolean(),
    })
    .chain((base) => (base.op.body ? validish(base.op.body, resolve).map((body) => ({ ...base, body })) : fc.constant({ ...base, body: undefined as unknown })))
    .map((x) => {
      let s = x.seed >>> 0;
      const r = () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 4294967296;
      };
      // Half the requests keep the body as is so deeper code paths are reached too.
      const twist = x.twistIndex < TWISTS.length ? TWISTS[x.twistIndex]! : TWISTS[0]!;
      const pathParams: Record<string, string> = {};
      const headers: Record<string, string> = {};
      for (const p of x.op.params) {
        if (p.in === 'path') pathParams[p.name] = x.pathValue;
        else if (p.in === 'header' && x.header !== undefined) headers[p.name] = x.reuse ? 'reused-key-1' : x.header;
      }
      if (x.op.path.includes('/support/chat') && x.header !== undefined) headers['x-support-chat-token'] = x.header;
      let body: Uint8Array | undefined;
      let contentType: string | undefined;
      if (x.op.body) ({ bytes: body, contentType } = twist.apply(x.body, r));
      return { op: x.op, auth: x.auth, twist: x.op.body ? twist.name : 'no_body', pathParams, headers, body, contentType };
    });
}

/**
 * Every twist once against every operation, with the credentials the operation accepts (a key
 * where keys are allowed, else a session; none for public ones), so no combination is left to chance.
 */
export function systematicRequests(
  ops: Operation[],
  resolve: (s: Schema) => Schema,
  known: { ids: string[] },
  seed: number,
  securityOf: (op: Operation) => AuthKind,
): HostileRequest[] {
  const out: HostileRequest[] = [];
  let n = 0;
  for (const op of ops) {
    const bodies = op.body ? fc.sample(validish(op.body, resolve), { seed: seed + n, numRuns: TWISTS.length }) : [];
    TWISTS.forEach((twist, i) => {
      n += 1;
      let s = (seed + n) >>> 0;
      const r = () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 4294967296;
      };
      const pathParams: Record<string, string> = {};
      const headers: Record<string, string> = {};
      for (const p of op.params) {
        if (p.in === 'path') pathParams[p.name] = known.ids[n % known.ids.length]!;
        else if (p.in === 'header') headers[p.name] = `systematic-${n}`;
      }
      if (!op.body && i > 0) return;
      const { bytes, contentType } = op.body ? twist.apply(bodies[i], r) : { bytes: undefined, contentType: undefined };
      out.push({ op, auth: securityOf(op), twist: op.body ? twist.name : 'no_body', pathParams, headers, body: bytes, contentType });
    });
  }
  return out;
}

/** The credentials a request may present (cookie values are the gw_session tokens). */
export interface Credentials {
  session: string;
  otherTenantSession: string;
  staffSession: string;
  key: string;
  revokedKey: string;
  chatToken: string;
  /** The Origin a browser on this server sends (default: baseUrl). */
  origin?: string;
  /** The session cookie's name (default gw_session; __Host-gw_session on an https public_url). */
  cookieName?: string;
}

/**
 * Sends one generated request as it is (no client-side repair). HEAD and GET carry no body. A
 * `query` string is appended as is (e.g. an unknown parameter). No answer at all is reported as 599.
 */
export async function sendRequest(
  baseUrl: string,
  req: HostileRequest,
  creds: Credentials,
  query = '',
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  let path = req.op.path;
  for (const [k, v] of Object.entries(req.pathParams)) path = path.replace(`{${k}}`, v);
  const headers: Record<string, string> = { ...req.headers };
  if (req.contentType !== undefined) headers['content-type'] = req.contentType;
  if (headers['x-support-chat-token'] === 'reused-key-1') headers['x-support-chat-token'] = creds.chatToken;
  const cookie = (token: string) => `${creds.cookieName ?? 'gw_session'}=${token}`;
  const origin = creds.origin ?? baseUrl;
  const sessions: Partial<Record<AuthKind, [string, string | undefined]>> = {
    session: [creds.session, origin],
    staff: [creds.staffSession, origin],
    other_tenant: [creds.otherTenantSession, origin],
    session_foreign_origin: [creds.session, 'https://evil.example'],
    session_no_origin: [creds.session, undefined],
  };
  const bearers: Partial<Record<AuthKind, string>> = { bearer: creds.key, bearer_junk: '\u00ff\u00fejunk', bearer_revoked: creds.revokedKey };
  const session = sessions[req.auth];
  if (session) {
    headers.cookie = cookie(session[0]);
    if (session[1] !== undefined) headers.origin = session[1];
  }
  const bearer = bearers[req.auth];
  if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
  const bodyless = req.op.method === 'GET' || req.op.method === 'HEAD';
  const init = { method: req.op.method, headers, body: bodyless ? undefined : req.body, redirect: 'manual' as const };
  const url = `${baseUrl}${path}${query}`;
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    // Once more on a new connection: a kept-alive socket the server closed at its idle timeout
    // fails the first try without the request ever being read.
    try {
      res = await fetch(url, init);
    } catch (err) {
      return { status: 599, headers: new Headers(), body: undefined, text: `no answer: ${String((err as Error).cause ?? err)}` };
    }
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: the envelope check fails for errors */
  }
  return { status: res.status, headers: res.headers, body, text };
}
