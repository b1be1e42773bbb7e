/**
 * The query parameters of the paged lists (GET /invoices, GET /events) and their reading into a
 * page request: limit, starting_after / ending_before (ids of the same list) and created_gte /
 * created_lt.
 */
import { z } from '@hono/zod-openapi';
import type { Cursor, PageRequest } from '../db/paging.js';
import { AppError } from '../lib/errors.js';

/** Longest page of a list, and the page size when `limit` is absent. */
export const MAX_PAGE = 500;

/** A query parameter that may be repeated (`?status=a&status=b`): read as a list either way. */
export function repeatable<T extends z.ZodType>(item: T, max: number) {
  return z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(item).min(1).max(max));
}

const IsoDateTime = z.iso.datetime({ offset: true, error: 'expected an RFC 3339 date-time, e.g. 2026-01-01T00:00:00Z' }).transform((v) => Date.parse(v));

/** The paging and creation-time query parameters every list shares (GET /invoices, GET /events). */
export function pagingQuery(resource: string, idExample: string) {
  return {
    limit: z
      .string()
      .regex(/^[0-9]{1,4}$/, `expected an integer from 1 to ${MAX_PAGE}`)
      .transform(Number)
      .pipe(z.number().int().min(1, `expected an integer from 1 to ${MAX_PAGE}`).max(MAX_PAGE, `expected an integer from 1 to ${MAX_PAGE}`))
      .optional()
      .openapi({
        param: { name: 'limit', in: 'query', description: `Page size, 1 to ${MAX_PAGE}; ${MAX_PAGE} when absent` },
        type: 'integer',
        minimum: 1,
        maximum: MAX_PAGE,
        example: 100,
      }),
    starting_after: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .openapi({
        param: {
          name: 'starting_after',
          in: 'query',
          description: `An ${resource} id: the page of the ${resource}s listed after it (older). The last id of a page gives the next page.`,
        },
        example: idExample,
      }),
    ending_before: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .openapi({
        param: {
          name: 'ending_before',
          in: 'query',
          description: `An ${resource} id: the page of the ${resource}s listed before it (newer). The first id of a page gives the previous page.`,
        },
        example: idExample,
      }),
    created_gte: IsoDateTime.optional().openapi({
      param: { name: 'created_gte', in: 'query', description: `Only ${resource}s created at or after this time` },
      type: 'string',
      format: 'date-time',
      example: '2026-01-01T00:00:00Z',
    }),
    created_lt: IsoDateTime.optional().openapi({
      param: { name: 'created_lt', in: 'query', description: `Only ${resource}s created before this time` },
      type: 'string',
      format: 'date-time',
      example: '2026-02-01T00:00:00Z',
    }),
  };
}

export interface PagingQuery {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
  created_gte?: number;
  created_lt?: number;
}

/**
 * The page the query asks for. A cursor id must name a row of the caller's own list: any other id,
 * another tenant's included, is the same 400 naming the parameter.
 */
export async function pageRequest(q: PagingQuery, resource: string, findCursor: (id: string) => Promise<Cursor | undefined>): Promise<PageRequest> {
  if (q.starting_after !== undefined && q.ending_before !== undefined) {
    throw new AppError('validation_error', 'The request is not valid', [
      { path: 'query.ending_before', message: 'use starting_after or ending_before, not both' },
    ]);
  }
  const page: PageRequest = { limit: q.limit ?? MAX_PAGE, createdGte: q.created_gte, createdLt: q.created_lt };
  for (const name of ['starting_after', 'ending_before'] as const) {
    const id = q[name];
    if (id === undefined) continue;
    const cursor = await findCursor(id);
    if (!cursor) throw new AppError('validation_error', 'The request is not valid', [{ path: `query.${name}`, message: `no such ${resource}` }]);
    if (name === 'starting_after') page.startingAfter = cursor;
    else page.endingBefore = cursor;
  }
  return page;
}
