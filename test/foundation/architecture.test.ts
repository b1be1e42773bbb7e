/**
 * The house rules of docs/architecture.md, checked on the source itself: a small reader of the
 * import statements of src/ (static, re-exports and dynamic imports, type-only ones included: a
 * type is a dependency too). It reports today's figures, and fails when one grows:
 * - an arrow running from a lower layer up to a higher one (the count may only go down: lower
 *   UPWARD_ARROWS_AT_MOST as arrows are removed);
 * - a new circle between files;
 * - process.env read outside config.ts;
 * - Date.now() outside the places that have no injected clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../..');
const src = join(root, 'src');

/** Today's count of upward arrows (issue 32 started from 44); lower it whenever arrows are removed. */
const UPWARD_ARROWS_AT_MOST = 19;
/** No circle between files (the last one went with AppDeps split from its builder). */
const CIRCLES_AT_MOST = 0;

/** Layers, lowest first: a file may import its own layer and those below, never one above. */
const LAYERS: Array<{ name: string; matches: (file: string) => boolean }> = [
  { name: 'base', matches: (f) => f.startsWith('lib/') || f === 'config.ts' || f === 'version.ts' },
  { name: 'infrastructure', matches: (f) => f.startsWith('db/') || f.startsWith('http/') },
  // The type of the dependency bag every feature receives (its builder, src/deps.ts, is composition).
  { name: 'contract', matches: (f) => f === 'app-deps.ts' },
  {
    name: 'features',
    matches: (f) =>
      /^(accounts|api-keys|wallets|invoices|chain|events|webhooks|ledger|email|support|dashboard|checkout|system|pricing|shops|transfers|telegram)\//.test(f),
  },
  { name: 'pages', matches: (f) => f.startsWith('pages/') },
  { name: 'composition', matches: () => true },
];

function layerOf(file: string): number {
  return LAYERS.findIndex((l) => l.matches(file));
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

test('imports run down the layers of docs/architecture.md: upward arrows only ever fewer, and no new circle', () => {
  const upward = [...graph].flatMap(([from, tos]) => tos.filter((to) => layerOf(to) > layerOf(from)).map((to) => `${from} -> ${to}`));
  const found = circles();
  console.log(`upward arrows: ${upward.length} (at most ${UPWARD_ARROWS_AT_MOST})\n  ${upward.join('\n  ')}`);
  console.log(`circles: ${found.length} (at most ${CIRCLES_AT_MOST})\n  ${found.map((c) => c.join(' <-> ')).join('\n  ')}`);
  assert.ok(upward.length <= UPWARD_ARROWS_AT_MOST, `${upward.length} upward arrows, more than ${UPWARD_ARROWS_AT_MOST}:\n${upward.join('\n')}`);
  assert.ok(found.length <= CIRCLES_AT_MOST, `${found.length} circles:\n${found.map((c) => c.join(' <-> ')).join('\n')}`);
  for (const pair of [
    ['cli/doctor.ts', 'cli/doctor-network.ts'],
    ['cli/dev.ts', 'devnet/dev.routes.ts'],
    ['http/context.ts', 'http/rate-limit.ts'],
  ]) {
    assert.ok(!found.some((c) => pair.every((f) => c.includes(f))), `circle again: ${pair.join(' <-> ')}`);
  }
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
    ['chain/tron.client.ts', 'request pacing measures elapsed real time'],
  ]);
  const users = files.filter((f) => /\bDate\.now\(\)/.test(texts.get(f)!));
  assert.deepEqual(
    users.filter((f) => !allowed.has(f)),
    [],
  );
});
