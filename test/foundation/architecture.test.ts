/**
 * The house rules of docs/architecture.md, checked on the source itself: a small reader of the
 * import statements of src/ (static, re-exports and dynamic imports, type-only ones included: a
 * type is a dependency too). It reports today's figures, and fails when one grows:
 * - an arrow running from a lower layer up to a higher one (the count may only go down: lower
 *   UPWARD_ARROWS_AT_MOST as arrows are removed);
 * - a new circle between files;
 * - process.env read outside config.ts;
 * - Date.now() outside the places that have no injected clock;
 * - a table queried outside the feature that owns it (one owner per table), beyond the read models
 *   and the exceptions listed below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../..');
const src = join(root, 'src');

/**
 * At most this many imports may run up the order below: today's count, above issue 45's aim of 15
 * (the moves still to make are listed in docs/architecture.md, "Layers"); lower it as arrows go.
 */
const UPWARD_ARROWS_AT_MOST = 28;
/**
 * Folder pairs that still import each other both ways (issue 45's aim: none). Each is one move still
 * to make; the test fails on any pair not listed here, and on a listed pair that is gone.
 */
const PAIRS_STILL_BOTH_WAYS = [
  'accounts <-> http', // http/auth.ts finds sessions itself: to become a hook the composition root fills
  'accounts <-> api-keys', // accounts/credentials.ts revokes keys and webhooks: to be given its revokers at start-up
  'accounts <-> dashboard', // accounts/me.routes.ts serves the dashboard's overview: to move to dashboard/
  'api-keys <-> http', // http/auth.ts finds keys itself (as accounts <-> http)
  'cli <-> devnet', // cli/dev-token.ts and the merchant creation devnet uses belong to devnet/
  'configuration <-> pricing', // pricing/pricing.config.ts belongs to the configuration layer
  'events <-> invoices', // events/events.schemas.ts and events.routes.ts (the events API) belong above the money path
  'events <-> transfers', // as events <-> invoices, and transfers/transfer-events.ts belongs to payments/
  'invoices <-> payments', // invoices/resolve*.ts is matching by hand and belongs to payments/
  'invoices <-> wallets', // wallets/wallets.routes.ts asks invoices for pending networks: to become a hook
  'pages <-> shops', // pages/render.ts is framework and belongs below the features
  'payments <-> transfers', // transfers/transfer-events.ts belongs to payments/
];
/** Files over 400 lines (the aim: none), to be split along their seams. */
const LONG_FILES_STILL = ['db/schema.ts', 'invoices/invoices.schemas.ts'];
/** No circle between files (the last one went with AppDeps split from its builder). */
const CIRCLES_AT_MOST = 0;

/**
 * The order of docs/architecture.md, lowest first: a file may import its own layer and those below,
 * never one above. Each feature is its own layer, in the order its imports allow (a feature imports
 * only the features listed before it).
 */
const FEATURES = [
  'telegram',
  'pricing',
  'email',
  'accounts',
  'api-keys',
  'support',
  'wallets',
  'events',
  'invoices',
  'payments',
  'chain',
  'transfers',
  'webhooks',
  'dashboard',
  'ledger',
  'checkout',
  'system',
  'shops',
  'pages',
];
const folder = (name: string) => ({ name, matches: (f: string) => f.startsWith(`${name}/`) });
const LAYERS: Array<{ name: string; matches: (file: string) => boolean }> = [
  { name: 'base', matches: (f) => f.startsWith('lib/') || f === 'version.ts' },
  // The chain families' readers, codecs and registry: they know no configuration, no database and no feature.
  folder('chains'),
  { name: 'configuration', matches: (f) => /^config(\.[\w-]+\.schema)?\.ts$/.test(f) || f === 'config.schema.ts' },
  folder('db'),
  folder('ops'),
  // The framework layer: it knows no feature (authentication finds sessions and keys through hooks).
  folder('http'),
  // The parts every feature may ask for (src/core/core-deps.ts); the whole bag is the composition root's.
  folder('core'),
  ...FEATURES.map(folder),
  { name: 'composition root', matches: (f) => !f.includes('/') && f !== 'main.ts' && f !== 'sea-main.ts' },
  folder('devnet'),
  folder('cli'),
  { name: 'entry', matches: (f) => f === 'main.ts' || f === 'sea-main.ts' },
];

/**
 * Imports that run up the order on purpose, each with its reason (the test fails when one no longer
 * happens, so the list stays true).
 */
const UPWARD_EXCEPTIONS = new Map<string, string>([]);

function layerOf(file: string): number {
  const i = LAYERS.findIndex((l) => l.matches(file));
  if (i < 0) throw new Error(`${file} is in no layer of the written order: add its folder to LAYERS (and docs/architecture.md)`);
  return i;
}

/** The folder a file belongs to for the both-ways check: its top folder, or its layer for files at the root. */
function groupOf(file: string): string {
  return file.includes('/') ? file.split('/')[0]! : LAYERS[layerOf(file)]!.name;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [relative(src, path)] : [];
  });
}

/** The code without comments (a rule named in a comment is not a use). Strings are kept. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'(\.[^']+)'/gm)].map((m) => m[1]!);
  return specifiers.map((s) => relative(src, resolve(dirname(join(src, file)), s)).replace(/\.js$/, '.ts'));
}

const files = sourceFiles(src).sort();
const texts = new Map(files.map((f) => [f, withoutComments(readFileSync(join(src, f), 'utf8'))]));
const graph = new Map(files.map((f) => [f, importsOf(f, texts.get(f)!).filter((to) => texts.has(to))]));

/** Circles: the strongly connected components with more than one file (Tarjan). */
function circles(): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return out;
}

test('imports run down the written order of layers: no new folder pair both ways, upward arrows only ever fewer, no circle', () => {
  const upward = [...graph].flatMap(([from, tos]) => tos.filter((to) => layerOf(to) > layerOf(from)).map((to) => `${from} -> ${to}`));
  const found = circles();
  const pairs = new Map<string, string[]>();
  for (const [from, tos] of graph)
    for (const to of tos) {
      const a = groupOf(from);
      const b = groupOf(to);
      if (a !== b) pairs.set(`${a} -> ${b}`, [...(pairs.get(`${a} -> ${b}`) ?? []), `${from} -> ${to}`]);
    }
  const bothWays = [...pairs.keys()]
    .filter((k) => {
      const [a, b] = k.split(' -> ');
      return a! < b! && pairs.has(`${b} -> ${a}`);
    })
    .map((k) => {
      const [a, b] = k.split(' -> ');
      return `${a} <-> ${b}: ${[...pairs.get(k)!, ...pairs.get(`${b} -> ${a}`)!].join(', ')}`;
    });
  console.log(`upward arrows: ${upward.length} (at most ${UPWARD_ARROWS_AT_MOST})\n  ${upward.join('\n  ')}`);
  console.log(`folder pairs both ways: ${bothWays.length}\n  ${bothWays.join('\n  ')}`);
  console.log(`circles: ${found.length} (at most ${CIRCLES_AT_MOST})\n  ${found.map((c) => c.join(' <-> ')).join('\n  ')}`);
  const newPairs = bothWays.filter((p) => !PAIRS_STILL_BOTH_WAYS.some((known) => p.startsWith(`${known}:`)));
  assert.deepEqual(newPairs, [], 'folders that import each other both ways');
  for (const known of PAIRS_STILL_BOTH_WAYS)
    assert.ok(
      bothWays.some((p) => p.startsWith(`${known}:`)),
      `gone: remove ${known} from PAIRS_STILL_BOTH_WAYS`,
    );
  assert.ok(upward.length <= UPWARD_ARROWS_AT_MOST, `${upward.length} upward arrows, more than ${UPWARD_ARROWS_AT_MOST}:\n${upward.join('\n')}`);
  for (const exception of UPWARD_EXCEPTIONS.keys()) assert.ok(upward.includes(exception), `listed exception no longer happens: ${exception}`);
  assert.ok(found.length <= CIRCLES_AT_MOST, `${found.length} circles:\n${found.map((c) => c.join(' <-> ')).join('\n')}`);
  for (const pair of [
    ['cli/doctor.ts', 'cli/doctor-network.ts'],
    ['cli/dev.ts', 'devnet/dev.routes.ts'],
    ['http/context.ts', 'http/rate-limit.ts'],
  ]) {
    assert.ok(!found.some((c) => pair.every((f) => c.includes(f))), `circle again: ${pair.join(' <-> ')}`);
  }
});

test('no file under src/ over 400 lines beyond the two still to split', () => {
  const long = files.map((f) => [f, readFileSync(join(src, f), 'utf8').split('\n').length] as const).filter(([, n]) => n > 400);
  assert.deepEqual(
    long.map(([f]) => f),
    LONG_FILES_STILL,
  );
});

test('only the composition root names the whole dependency bag (src/app-deps.ts)', () => {
  const below = files.filter((f) => layerOf(f) < layerOf('app.ts') && graph.get(f)!.includes('app-deps.ts'));
  assert.deepEqual(below, []);
});

test('process.env is read in config.ts only', () => {
  // ops/embedded.ts finds the single executable's cache folder before any configuration exists.
  // cli/backup-postgres.ts finds pg_dump on PATH and hands it the environment (and PGPASSWORD).
  const allowed = new Set(['config.ts', 'ops/embedded.ts', 'cli/backup-postgres.ts']);
  const readers = files.filter((f) => /\bprocess\.env\b/.test(texts.get(f)!));
  assert.deepEqual(
    readers.filter((f) => !allowed.has(f)),
    [],
  );
});

test('Date.now() only where no injected clock exists', () => {
  const allowed = new Map([
    ['lib/clock.ts', 'the system clock itself'],
    ['serve.ts', 'start-up, before the dependencies (and their clock) exist'],
    ['cli/backup.ts', 'a command outside the server'],
    ['cli/doctor-network.ts', 'a command outside the server'],
    ['cli/merchant.ts', 'a command outside the server'],
    ['cli/migrate.ts', 'a command outside the server'],
    ['cli/chain.ts', 'a command outside the server'],
    ['cli/backup-postgres.ts', 'a command outside the server'],
    ['cli/db-copy.ts', 'a command outside the server'],
    ['devnet/tron-node.ts', 'the simulated chain: wall time unless its own clock is given'],
    ['devnet/sim-chain.ts', 'the simulated chain: wall time unless its own clock is given'],
    ['devnet/evm-chain.ts', 'the simulated EVM chains: wall time unless their own clock is given'],
    ['chain/tron.client.ts', 'request pacing measures elapsed real time'],
  ]);
  const users = files.filter((f) => /\bDate\.now\(\)/.test(texts.get(f)!));
  assert.deepEqual(
    users.filter((f) => !allowed.has(f)),
    [],
  );
});

/**
 * One owner per table: the feature folder whose files may query it. Others ask the owner's
 * functions. Read models (the Dashboard and the operator's figures) may read any table, never write.
 */
const TABLE_OWNERS: Record<string, string> = {
  merchants: 'accounts',
  sessions: 'accounts',
  email_tokens: 'accounts',
  registrations: 'accounts',
  password_resets: 'accounts',
  two_factor: 'accounts',
  two_factor_recovery_codes: 'accounts',
  api_keys: 'api-keys',
  wallets: 'wallets',
  wallet_networks: 'wallets',
  invoices: 'invoices',
  invoice_options: 'invoices',
  amount_reservations: 'invoices',
  amount_cursors: 'invoices',
  invoice_stats: 'invoices',
  invoice_resolutions: 'invoices',
  merchant_payment_settings: 'accounts',
  transfer_contests: 'invoices',
  payment_notices: 'payments',
  events: 'events',
  webhooks: 'webhooks',
  deliveries: 'webhooks',
  delivery_attempts: 'webhooks',
  idempotency_keys: 'http',
  captcha_tokens: 'http',
  shop_connections: 'shops',
  shop_orders: 'shops',
  shop_notifies: 'shops',
  shop_notify_attempts: 'shops',
  support_tickets: 'support',
  support_messages: 'support',
  chain_transfers: 'payments',
  chain_seen: 'payments',
  chain_scan: 'payments',
  chain_scan_gaps: 'payments',
  chain_disputes: 'payments',
  telegram_links: 'telegram',
  telegram_outbox: 'telegram',
  telegram_bot_state: 'telegram',
  schema_migrations: 'db',
  instance_network: 'db',
};
const READ_MODELS = ['dashboard/', 'ops/'];

/** Today's queries on another feature's table, each with its reason. The list may only shrink. */
const FOREIGN_TABLE_USES = new Map<string, string>([
  ['merchants <- payments/payment-notices.ts', "a join for the merchant's address and name on each notice"],
  ['merchants <- invoices/invoices.repo.ts', "a join for the business name on the checkout's invoice"],
  ['merchants <- support/support.repo.ts', "a join for the merchant's name and address on tickets"],
  ['merchants <- telegram/telegram.repo.ts', "a join for the merchant's name in notices"],
  ['api_keys <- accounts/credentials.ts', "a password change revokes the owner's credentials in one transaction"],
  ['webhooks <- accounts/credentials.ts', "a password change revokes the owner's credentials in one transaction"],
  ['wallets <- payments/transfers.repo.ts', "the unmatched transfers to a merchant's wallets (the console's Transfers page)"],
  ['wallet_networks <- payments/transfers.repo.ts', 'the same, on each network a wallet receives on'],
  ['events <- webhooks/webhooks.repo.ts', 'a delivery attempt loads its event with the delivery in one read'],
  ['webhooks <- events/events.repo.ts', 'an event fans out to the active webhooks in the transaction that stores it'],
  ['deliveries <- events/events.repo.ts', 'an event fans out to the active webhooks in the transaction that stores it'],
  ['deliveries <- system/system.routes.ts', "/health's delivery backlog"],
  ['captcha_tokens <- accounts/email-tokens.repo.ts', 'expired tokens are pruned with the other short-lived rows'],
  ['chain_transfers <- checkout/tx-claim.ts', "the payer's claim of a transaction looks for it among the recorded ones"],
  ['chain_transfers <- invoices/invoice-payments.ts', 'the payment applied to an invoice updates its transfer in the same transaction'],
  ['chain_transfers <- checkout/checkout-view.ts', "the payer's page asks whether an unmatched payment reached its address while the invoice was open"],
  ['invoice_resolutions <- checkout/checkout-view.ts', 'the same question leaves out a transfer that was applied to an invoice by hand'],
  ['chain_transfers <- invoices/invoices.repo.ts', 'invoice search by transaction hash finds the invoices that hash paid'],
  ['wallets <- invoices/invoices.repo.ts', "invoice search by address finds the merchant's wallet of that address"],
]);

/** Each query on a known table: from which file, and whether it writes. */
function tableUses(): Array<{ table: string; file: string; write: boolean }> {
  const uses: Array<{ table: string; file: string; write: boolean }> = [];
  const patterns: Array<[RegExp, boolean]> = [
    [/\b(?:selectFrom|innerJoin|leftJoin|rightJoin|with)\(\s*'(\w+)/g, false],
    [/\b(?:insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*'(\w+)/g, true],
    [/\b(?:FROM|JOIN)\s+"?(\w+)"?/g, false],
    [/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?/g, true],
  ];
  for (const file of files) {
    for (const [pattern, write] of patterns) {
      for (const m of texts.get(file)!.matchAll(pattern)) {
        if (m[1]! in TABLE_OWNERS) uses.push({ table: m[1]!, file, write });
      }
    }
  }
  return uses;
}

test('one owner per table: a table is queried by its own feature, read models only read, and the exceptions are listed', () => {
  const uses = tableUses();
  for (const table of Object.keys(TABLE_OWNERS))
    assert.ok(
      uses.some((u) => u.table === table),
      `no query on ${table}: is the owner list stale?`,
    );
  const foreign = new Set<string>();
  const readModelWrites: string[] = [];
  for (const u of uses) {
    if (u.file.startsWith(`${TABLE_OWNERS[u.table]}/`)) continue;
    if (READ_MODELS.some((dir) => u.file.startsWith(dir))) {
      if (u.write) readModelWrites.push(`${u.table} <- ${u.file}`);
      continue;
    }
    foreign.add(`${u.table} <- ${u.file}`);
  }
  assert.deepEqual(readModelWrites, [], 'a read model writes');
  assert.deepEqual(
    [...foreign].filter((k) => !FOREIGN_TABLE_USES.has(k)).sort(),
    [],
    "another feature's table queried: ask its owner's functions, or list the exception with its reason",
  );
  assert.deepEqual(
    [...FOREIGN_TABLE_USES.keys()].filter((k) => !foreign.has(k)),
    [],
    'an exception that no longer happens: take it off the list',
  );
  // The two named in issue 32, now gone: the ledger reads invoices through the invoices feature, and
  // the invoices service asks the chain feature's service, not its repository.
  assert.ok(!foreign.has('invoices <- ledger/ledger.repo.ts') && !texts.has('ledger/ledger.repo.ts'));
  assert.ok(!graph.get('invoices/invoices.service.ts')!.includes('chain/chain.repo.ts'));
});
