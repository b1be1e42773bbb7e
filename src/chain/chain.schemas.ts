/** The TRON chain watcher's part of GET /health. */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';

/** The chain watcher's part of GET /health. */
export const WatcherHealthSchema = z
  .object({
    state: z.enum(['stopped', 'idle', 'running', 'degraded']),
    lag_seconds: z.number().nullable().openapi({ description: 'Seconds between now and the time up to which every block is read (null when idle)' }),
    scan: z.object({
      block: z.number().int().nullable().openapi({ description: 'The newest block the head follower has read' }),
      solid_head: z.number().int().nullable().openapi({ description: 'The newest solidified block known' }),
      behind_blocks: z.number().int().nullable().openapi({ description: 'Solidified blocks the follower has not read yet' }),
      gap_blocks: z.number().int().openapi({ description: 'Blocks behind the follower still to be backfilled (after downtime)' }),
      inconsistent_blocks: z.number().int().openapi({ description: 'Blocks whose two reads disagreed since the start (never trusted)' }),
      disputed_blocks: z.number().int().openapi({
        description:
          'Blocks held as disputed now: the providers disagree, even about a transaction asked by id; nothing from them confirms, and the invoices whose window meets one stay open; later blocks go on confirming',
      }),
      reason: z.string().nullable().openapi({ description: 'Why the watcher is degraded or waiting, when it is' }),
    }),
    disputes: z
      .array(
        z.object({
          block: z.number().int().nullable().openapi({ description: 'The disputed block' }),
          tx_hash: z.string().nullable().openapi({ description: 'The transaction the providers disagree about, when the disagreement is about one transfer' }),
          reason: z.string(),
          since: DateTime.openapi({ description: 'When it was first held' }),
          last_seen_at: DateTime.openapi({ description: 'When it was last found still disputed' }),
          mailed_at: DateTime.nullable().openapi({ description: 'When the support staff were mailed about it (once a dispute)' }),
        }),
      )
      .openapi({
        description:
          'The open disputes, oldest block first, from the database (the same in every instance and after a restart); a dispute is resolved once the providers agree on the block',
      }),
    providers: z.array(
      z.object({
        name: z.string().openapi({ description: 'The provider scheme and host (never its path, query or key)' }),
        state: z.enum(['ok', 'backing_off', 'set_aside']),
        consecutive_failures: z.number().int(),
        requests: z.number().int(),
        failures: z.number().int(),
        inconsistent_blocks: z.number().int(),
        refused_heads: z.number().int().openapi({ description: 'Heads it served that were refused (not credible, or not confirmed by another provider)' }),
        malformed_reads: z.number().int().openapi({ description: 'Answers refused as malformed (block time out of range, a transaction of another block...)' }),
        outvoted_blocks: z.number().int().openapi({
          description:
            'Blocks about which the other providers outvoted it (its block answer, or its answer by transaction id, for example a payment it left out of a block but returns by id); each sets it aside',
        }),
        set_aside_until: DateTime.nullable().openapi({
          description: 'Set aside until then after the other providers outvoted it: asked after every other provider, never first, meanwhile',
        }),
        last_error: z.string().nullable(),
        last_ok_at: DateTime.nullable(),
        retry_at: DateTime.nullable(),
      }),
    ),
  })
  .openapi('WatcherHealth');
