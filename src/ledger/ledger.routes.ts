/** GET /ledger.csv: the operational ledger (key with ledger:read, or session). */
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../deps.js';
import { requireKeyOrSession } from '../http/auth.js';
import { createRouter, errorResponses, KEY_OR_SESSION } from '../http/openapi.js';
import { LEDGER_COLUMNS, ledgerStream } from './ledger.service.js';

export function ledgerRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/ledger.csv',
      tags: ['Ledger'],
      summary: 'The full operational ledger as CSV (not a statutory accounting report)',
      description:
        `Columns: ${LEDGER_COLUMNS.join(',')}. One row per invoice, newest first. RFC 4180 quoting, CRLF line ends, UTF-8; ` +
        "a cell starting with =, +, -, @, tab or CR is prefixed with '. " +
        "late_payments: hashes of transfers of the invoice's amount that arrived after its window, joined by ';'.",
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'ledger:read')] as const,
      responses: {
        200: { description: 'The ledger', content: { 'text/csv': { schema: z.string() } } },
        ...errorResponses(401, 403, 429),
      },
    }),
    (c) => {
      const day = new Date(deps.clock.now()).toISOString().slice(0, 10);
      return c.body(ledgerStream(deps.db, c.get('auth').merchantId), 200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="ledger-${day}.csv"`,
      });
    },
  );

  return app;
}
