/** GET /ledger.csv: the operational ledger (key with ledger:read, or session). */
import { createRoute, z } from '@hono/zod-openapi';
import { requireKeyOrSession } from '../http/auth.js';
import { createRouter, errorResponses, KEY_OR_SESSION } from '../http/openapi.js';
import { LEDGER_COLUMNS, ledgerStream } from './ledger.service.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'rateLimiter'>;

/** A UTC day (`2026-05-01`, its midnight) or an RFC 3339 date-time. */
const LedgerTime = z
  .union(
    [
      z
        .string()
        .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/)
        .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`))),
      z.iso.datetime({ offset: true }),
    ],
    { error: 'expected a date (2026-05-01, midnight UTC) or an RFC 3339 date-time' },
  )
  .transform((v) => Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v));

// An empty value means no bound: the console's date fields send `created_gte=` when left empty.
const bound = z.preprocess((v) => (v === '' ? undefined : v), LedgerTime.optional());

/** What a bound may be, for the document: a date, an RFC 3339 date-time, or empty (no bound). */
const BOUND_FORMS = [
  { type: 'string' as const, format: 'date' },
  { type: 'string' as const, format: 'date-time' },
  { type: 'string' as const, maxLength: 0 },
];

export const LedgerQuerySchema = z.strictObject({
  created_gte: bound.openapi({
    anyOf: BOUND_FORMS,
    param: { name: 'created_gte', in: 'query', description: 'Only invoices created at or after this time (a date means its midnight UTC)' },
    example: '2026-05-01',
  }),
  created_lt: bound.openapi({
    anyOf: BOUND_FORMS,
    param: {
      name: 'created_lt',
      in: 'query',
      description: 'Only invoices created before this time (a date means its midnight UTC, so the day itself is left out)',
    },
    example: '2026-06-01',
  }),
});

export function ledgerRoutes(deps: Deps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/ledger.csv',
      operationId: 'getLedger',
      tags: ['Ledger'],
      summary: 'The full operational ledger as CSV (not a statutory accounting report)',
      description:
        `Columns: ${LEDGER_COLUMNS.join(',')}. One row per invoice, newest first. RFC 4180 quoting, CRLF line ends, UTF-8; ` +
        "a cell starting with =, +, -, @, tab or CR is prefixed with '. " +
        "late_payments: hashes of transfers of the invoice's amount that arrived after its window, joined by ';'. " +
        "received_amount: USDT the invoice actually received (the applied transfer's amount for a payment resolved by hand), empty while unpaid. " +
        'price_amount, price_currency, price_rate, price_markup_percent, price_rate_at: the fiat price the invoice was created from, empty when priced in USDT. ' +
        'created_gte and created_lt limit the rows to a range of creation times.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'ledger:read')] as const,
      request: { query: LedgerQuerySchema },
      responses: {
        200: { description: 'The ledger', content: { 'text/csv': { schema: z.string() } } },
        ...errorResponses(400, 401, 403, 429),
      },
    }),
    (c) => {
      const { created_gte: createdGte, created_lt: createdLt } = c.req.valid('query');
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const name =
        createdGte === undefined && createdLt === undefined
          ? day(deps.clock.now())
          : `${createdGte === undefined ? 'start' : day(createdGte)}_${createdLt === undefined ? day(deps.clock.now()) : day(createdLt)}`;
      return c.body(ledgerStream(deps.db, c.get('auth').merchantId, { createdGte, createdLt }), 200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="ledger-${name}.csv"`,
      });
    },
  );

  return app;
}
