/**
 * Shared pieces of the reliability suite (issue 11): the run size (a reduced, seeded run inside
 * `npm test`; `RELIABILITY=full` for `npm run test:reliability`), a seeded PRNG, the tally each
 * scenario prints as its summary line, and the preparation of a database for a real `gatewayd
 * serve` child process (merchants, sessions, keys, wallets written before the first start).
 */
import { seededRandom } from '../../src/lib/seeded-random.js';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { insertMerchant } from '../../src/accounts/merchants.repo.js';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { insertKey } from '../../src/api-keys/api-keys.repo.js';
import { openDatabase, openSqlite, type Sqlite } from '../../src/db/database.js';
import { migrate, migrateDatabase } from '../../src/db/migrator.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import { NETWORK } from '../helpers/tron-samples.js';
import { tempDir } from '../helpers/app.js';
import { HttpClient } from '../helpers/http.js';

export const FULL = process.env.RELIABILITY === 'full';
export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261121);

/** The reduced count inside `npm test`, the full one under RELIABILITY=full. */
export function size(reduced: number, full: number): number {
  return FULL ? full : reduced;
}

/** A seeded PRNG (src/lib/seeded-random.ts) so a failing run can be replayed with RELIABILITY_SEED. */
export function rng(seed: number = SEED): () => number {
  return seededRandom(seed);
}

/**
 * Counts what a scenario did and every invariant it checked. A violation is recorded, not thrown,
 * so the summary lists all of them; `finish()` prints the summary line and fails on any.
 */
export class Tally {
  faults = 0;
  requests = 0;
  invariants = 0;
  /** The first 200 violations in full; `violationCount` counts them all. */
  readonly violations: string[] = [];
  violationCount = 0;
  readonly extra: Record<string, number> = {};

  constructor(readonly name: string) {}

  check(ok: boolean, what: string): boolean {
    this.invariants += 1;
    if (!ok) {
      this.violationCount += 1;
      if (this.violations.length < 200) this.violations.push(what);
    }
    return ok;
  }

  count(key: string, by = 1): void {
    this.extra[key] = (this.extra[key] ?? 0) + by;
  }

  finish(): void {
    const extra = Object.entries(this.extra)
      .map(([k, v]) => ` ${k}=${v}`)
      .join('');
    const mode = FULL ? 'full' : 'reduced';
    console.log(
      `[reliability:${this.name}] mode=${mode} seed=${SEED} faults injected=${this.faults} requests sent=${this.requests} invariants checked=${this.invariants}${extra} violations=${this.violationCount}`,
    );
    for (const v of this.violations) console.log(`[reliability:${this.name}] VIOLATION ${v}`);
    assert.deepEqual(this.violations, [], `${this.name}: invariant violations`);
  }
}

/** The warnings and errors a gateway logged (for a report when a check failed). */
export function problemLines(output: string, max = 30): string[] {
  return output
    .split('\n')
    .filter((l) => /"level":"(warn|error|fatal)"/.test(l) && !/webhook attempt failed/.test(l))
    .slice(-max)
    .map((l) => l.slice(0, 600));
}

export const ADDRESSES = [
  'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre',
  'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx',
  'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi',
  'TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh',
] as const;

export interface PreparedMerchant {
  id: string;
  email: string;
  sessionToken: string;
  /** Full-scope key secret and id. */
  key: string;
  keyId: string;
  walletId: string;
  address: string;
}

/** A migrated database in a fresh folder with `count` confirmed merchants, each with a session, a key and a wallet. */
export async function prepareDatabase(
  count: number,
  options: { addresses?: readonly string[]; dir?: string; url?: string } = {},
): Promise<{ dir: string; dbPath: string; merchants: PreparedMerchant[] }> {
  const dir = options.dir ?? tempDir('gatewayd-rel-');
  const dbPath = join(dir, 'gateway.db');
  // A postgres:// url prepares that (empty) PostgreSQL database instead of the file.
  const db = openDatabase({ path: dbPath, url: options.url ?? '' });
  if (options.url) await migrateDatabase(db, Date.now());
  else migrate(db.sqlite, Date.now());
  const addresses = options.addresses ?? ADDRESSES;
  const merchants: PreparedMerchant[] = [];
  for (let i = 0; i < count; i++) {
    const now = Date.now();
    const email = `rel${i}.${now}@example.test`;
    const m = await insertMerchant(db.db, { email, name: `Shop ${i}`, passwordHash: null, emailVerifiedAt: now }, now);
    const { token } = await createSession(db.db, m.id, now);
    const { key, secret } = await insertKey(
      db.db,
      m.id,
      { name: 'server', scopes: ['invoices:read', 'invoices:write', 'ledger:read'], expiresInDays: null },
      now,
    );
    const address = addresses[i % addresses.length]!;
    const { wallet } = await registerWallet(db.db, NETWORK, m.id, 'Main', address, now);
    merchants.push({ id: m.id, email, sessionToken: token, key: secret, keyId: key.id, walletId: wallet.id, address });
  }
  await db.close();
  return { dir, dbPath, merchants };
}

/** An owner-session client for a prepared merchant against a running gateway. */
export function sessionClient(baseUrl: string, m: PreparedMerchant, origin: string | null = baseUrl): HttpClient {
  const c = new HttpClient(baseUrl, origin);
  c.cookies.set(SESSION_COOKIE, m.sessionToken);
  return c;
}

/** A read-only connection for invariant checks while the gateway runs (WAL lets readers in). */
export function reader(dbPath: string): Sqlite {
  return openSqlite(dbPath, { readonly: true });
}

export function integrityOk(sqlite: Sqlite): boolean {
  const rows = sqlite.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
  return rows.length === 1 && rows[0]!.integrity_check === 'ok';
}

/** Live invoices sharing a payable amount on one reservation key (must be none). */
export function duplicatePayables(sqlite: Sqlite): number {
  const row = sqlite
    .prepare(
      `SELECT COUNT(*) AS n FROM (SELECT network, token_contract, wallet_address, payable_amount FROM invoices
         GROUP BY network, token_contract, wallet_address, payable_amount HAVING COUNT(*) > 1)`,
    )
    .get() as { n: number };
  return row.n;
}

/** Rows where the trigger-kept invoice_stats (migrations/0007) and a recount of invoices differ. */
export function statsDrift(sqlite: Sqlite): number {
  const recount = `SELECT merchant_id, status, count(*), sum(base_amount / 1000000), sum(base_amount % 1000000), sum(adjustment),
      sum(payable_amount / 1000000), sum(payable_amount % 1000000) FROM invoices GROUP BY merchant_id, status`;
  const kept = `SELECT merchant_id, status, invoices, base_units, base_micros, adjustment, payable_units, payable_micros
      FROM invoice_stats WHERE invoices <> 0`;
  const count = (q: string) => (sqlite.prepare(`SELECT COUNT(*) AS n FROM (${q})`).get() as { n: number }).n;
  return count(`${recount} EXCEPT ${kept}`) + count(`${kept} EXCEPT ${recount}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** What a scenario leaves behind: a reader on the file, the gateway child, the loopback stand-ins, its folder. */
export interface Leftovers {
  dir: string;
  db?: Sqlite;
  gw: { stop(): Promise<unknown> };
  servers: ReadonlyArray<{ close(): Promise<unknown> }>;
}

/** The end of every scenario, whether it passed or threw: the reader closed, the gateway stopped, the stand-ins closed, the folder removed. */
export async function teardown(left: Leftovers): Promise<void> {
  left.db?.close();
  await left.gw.stop();
  for (const server of left.servers) await server.close();
  rmSync(left.dir, { recursive: true, force: true });
}

/** The gateway logged no unhandled error (each one is a 500 some client saw). */
export function checkNoUnhandledErrors(tally: Tally, output: string): void {
  tally.check(!/unhandled error/.test(output), `unhandled errors logged: ${output.match(/.*unhandled error.*/)?.[0]?.slice(0, 300)}`);
}

/** An invoice a creation was answered with (what the invariants compare the database to). */
export interface AnsweredInvoice {
  id: string;
  payable: string;
  address: string;
}

/**
 * The payer of the crash scenarios: every `everyMs` while `running()`, pays one answered invoice not
 * paid yet (a seeded choice) with its exact amount, through `pay` (the stand-in chain's transfer),
 * and notes its transaction in `paid`.
 */
export async function payAnswered(o: {
  running: () => boolean;
  everyMs: number;
  random: () => number;
  answered: ReadonlyMap<string, AnsweredInvoice>;
  paid: Map<string, string>;
  pay: (to: string, amount: bigint) => string;
}): Promise<void> {
  while (o.running()) {
    await sleep(o.everyMs);
    const open = [...o.answered.values()].filter((a) => !o.paid.has(a.id));
    if (open.length === 0) continue;
    const a = open[Math.floor(o.random() * open.length)]!;
    o.paid.set(a.id, o.pay(a.address, microUnits(a.payable)));
  }
}

/** An invoice's row as the at-rest checks read it. */
export interface InvoiceAtRest {
  payable_amount: number;
  wallet_address: string;
  status: string;
  tx_hash: string | null;
}

/**
 * The answered-invoice invariants of the crash scenarios, whatever engine holds the rows: every
 * answered invoice is still there with its payable amount and address, and a confirmation, once
 * seen, never changes nor goes away. `rowOf` reads one invoice by id.
 */
export function checkAnsweredInvoices(
  tally: Tally,
  when: string,
  answered: Iterable<[string, AnsweredInvoice]>,
  confirmedSeen: Map<string, string>,
  rowOf: (id: string) => InvoiceAtRest | undefined,
): void {
  for (const [key, a] of answered) {
    const row = rowOf(a.id);
    tally.check(
      row !== undefined && BigInt(row.payable_amount) === microUnits(a.payable) && row.wallet_address === a.address,
      `${when}: answered invoice ${a.id} (${key}) lost or changed`,
    );
    if (row?.status === 'confirmed') {
      const before = confirmedSeen.get(a.id);
      tally.check(before === undefined || before === row.tx_hash, `${when}: ${a.id} changed its confirmation`);
      confirmedSeen.set(a.id, row.tx_hash!);
    }
  }
  for (const [id, tx] of confirmedSeen) {
    const row = rowOf(id);
    tally.check(row?.status === 'confirmed' && row.tx_hash === tx, `${when}: ${id} lost its confirmation`);
  }
}

/** Exact decimal text to micro-units. */
export function microUnits(text: string): bigint {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/** A creator of the crash scenarios: while `running()`, one invoice of 10 for a seeded merchant every `paceMs`, keys `<prefix>-<n>`. */
export async function createInvoices(o: {
  running: () => boolean;
  paceMs: number;
  random: () => number;
  merchants: readonly PreparedMerchant[];
  next: () => string;
  create: (m: PreparedMerchant, key: string, body: Record<string, unknown>) => Promise<void>;
}): Promise<void> {
  while (o.running()) {
    const m = o.merchants[Math.floor(o.random() * o.merchants.length)]!;
    const key = o.next();
    await o.create(m, key, { merchant_order_id: key, amount: '10', wallet_id: m.walletId, expires_in_minutes: 60 });
    await sleep(o.paceMs);
  }
}

/** Checks a creation's answer (201, or 200 for a replay, never a second invoice for one key) and notes it in `answered`. */
export function noteCreation<A extends AnsweredInvoice>(
  tally: Tally,
  answered: Map<string, A>,
  key: string,
  res: { status: number; text: string; body: any },
  extra: Omit<A, keyof AnsweredInvoice>,
): void {
  tally.check(res.status === 201 || res.status === 200, `create ${key}: ${res.status} ${res.text.slice(0, 200)}`);
  if (res.status !== 201 && res.status !== 200) return;
  const inv = res.body.invoice;
  const prev = answered.get(key);
  tally.check(!prev || prev.id === inv.id, `key ${key} answered two invoices ${prev?.id} ${inv.id}`);
  answered.set(key, { id: inv.id, payable: inv.payable_amount, address: inv.wallet_address, ...extra } as A);
}
