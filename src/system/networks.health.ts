/**
 * The `networks` list of GET /health: every network the instance watches, TRON first, with its
 * watcher's state, how far it has read, the final head its providers show, how far behind it is,
 * its open disputes (from the database: the same in every instance) and, per provider, its state,
 * last error, the range cap learned from its refusals and what it refuses.
 */
import { z } from '@hono/zod-openapi';
import { NETWORK_IDS } from '../chains/networks.js';
import { DateTime } from '../http/openapi.js';
import { isoOrNull } from '../lib/clock.js';
import { refusals } from '../chains/evm/watch.js';
import { listOpenDisputes } from '../payments/scan.repo.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { ChainRuntime } from '../chain/chain.runtime.js';
import type { EvmWatches } from '../chains/evm/watch.js';
import type { AccountWatches } from '../chains/account-watch.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock'> & { watcherStatus: WatcherStatus; chain: ChainRuntime; evm: EvmWatches; accounts: AccountWatches };

const ProviderHealthSchema = z.object({
  name: z.string().openapi({ description: 'The provider scheme and host (never its path, query or key)' }),
  state: z
    .enum(['ok', 'backing_off', 'set_aside', 'failing'])
    .openapi({ description: 'failing: three failures in a row or more; backing_off: not asked until retry_at' }),
  last_error: z.string().nullable(),
  last_ok_at: DateTime.nullable(),
  retry_at: DateTime.nullable().openapi({ description: 'Not asked before then (its Retry-After, or a backoff after failures)' }),
  range_cap: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'The most blocks one eth_getLogs may span, learned from its refusals (null: none refused; TRON: not used)' }),
  refuses: z
    .array(z.string())
    .openapi({ description: 'What it refused, in plain words, once each (a large range, bursts of requests, a credible final head...)' }),
});

export const NetworkHealthSchema = z
  .object({
    network: z.enum(NETWORK_IDS),
    family: z.enum(['tron', 'evm', 'solana', 'ton']),
    state: z.enum(['stopped', 'idle', 'running', 'degraded']).openapi({
      description:
        'idle: no invoice open there (TRON: no request; EVM: a slow catch-up every 10 minutes; Solana and TON: a sweep of every registered account every 10 minutes); running: invoices open and read; degraded: see reason',
    }),
    reason: z.string().nullable().openapi({ description: 'Why it is degraded or waiting, when it is' }),
    cursor_block: z.number().int().nullable().openapi({ description: 'Every block up to this one is read as final (null before the first read)' }),
    final_head: z.number().int().nullable().openapi({
      description:
        'The newest final block the providers show (TRON: solidified; EVM: the lower of two providers; Solana: finalized slot; TON: masterchain seqno)',
    }),
    behind_blocks: z.number().int().nullable().openapi({ description: 'Final blocks not read yet' }),
    disputes: z
      .number()
      .int()
      .openapi({ description: 'Open disputes: blocks held because the providers disagree about them (details for TRON in `watcher.disputes`)' }),
    providers: z.array(ProviderHealthSchema),
  })
  .openapi('NetworkHealth');

function behind(cursor: number | null, head: number | null): number | null {
  return cursor === null || head === null ? null : Math.max(0, head - cursor);
}

export async function networksHealth(
  deps: Pick<Deps, 'db' | 'config' | 'chain' | 'evm' | 'accounts' | 'watcherStatus' | 'clock'>,
): Promise<Array<z.infer<typeof NetworkHealthSchema>>> {
  const tron = deps.config.network;
  const f = deps.chain.figures;
  const out: Array<z.infer<typeof NetworkHealthSchema>> = [
    {
      network: tron.id,
      family: 'tron',
      state: deps.watcherStatus.state,
      reason: f.reason,
      cursor_block: f.block,
      final_head: f.solid_head,
      behind_blocks: behind(f.block, f.solid_head),
      disputes: (await listOpenDisputes(deps.db, tron)).length,
      providers: deps.chain.pool.health(deps.clock.now()).map((p) => ({
        name: p.name,
        state: p.state,
        last_error: p.last_error,
        last_ok_at: isoOrNull(p.last_ok_at),
        retry_at: isoOrNull(p.retry_at),
        range_cap: null,
        refuses: [],
      })),
    },
  ];
  for (const w of deps.evm.values()) {
    const g = w.figures;
    out.push({
      network: w.network.id,
      family: 'evm',
      state: g.state,
      reason: g.reason,
      cursor_block: g.cursorBlock,
      final_head: g.finalHead,
      behind_blocks: behind(g.cursorBlock, g.finalHead),
      disputes: (await listOpenDisputes(deps.db, w.network)).length,
      providers: w.providers.map((p) => {
        const cap = w.caps.get(p.health.name);
        return {
          name: p.health.name,
          state: p.health.state,
          last_error: p.health.lastError,
          last_ok_at: isoOrNull(p.health.lastOkAt),
          retry_at: isoOrNull(p.health.retryAt),
          range_cap: cap === undefined ? null : Number(cap),
          refuses: refusals(w, p),
        };
      }),
    });
  }
  for (const w of deps.accounts.values()) {
    const g = w.figures;
    out.push({
      network: w.network.id,
      family: w.network.family === 'ton' ? 'ton' : 'solana',
      state: g.state,
      reason: g.reason,
      cursor_block: g.cursorBlock,
      final_head: g.finalHead,
      behind_blocks: behind(g.cursorBlock, g.finalHead),
      disputes: (await listOpenDisputes(deps.db, w.network)).length,
      providers: w.providers.map((p) => ({
        name: p.health.name,
        state: p.health.state,
        last_error: p.health.lastError,
        last_ok_at: isoOrNull(p.health.lastOkAt),
        retry_at: isoOrNull(p.health.retryAt),
        range_cap: null,
        refuses: [...p.health.refuses],
      })),
    });
  }
  return out;
}
