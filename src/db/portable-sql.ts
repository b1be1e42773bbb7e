/**
 * SQL that reads the same on SQLite and PostgreSQL where their functions differ: SQLite's scalar
 * max(a, b) / min(a, b) are PostgreSQL's GREATEST / LEAST (and max/min of one argument are
 * aggregates there). Written as CASE, which both run, so feature code needs no dialect switch.
 */
import { sql, type Expression, type RawBuilder } from 'kysely';

/** The larger of two non-null values. */
export function larger<T>(a: Expression<T> | T, b: Expression<T> | T): RawBuilder<T> {
  return sql<T>`CASE WHEN ${a} >= ${b} THEN ${a} ELSE ${b} END`;
}

/** The smaller of two non-null values. */
export function smaller<T>(a: Expression<T> | T, b: Expression<T> | T): RawBuilder<T> {
  return sql<T>`CASE WHEN ${a} <= ${b} THEN ${a} ELSE ${b} END`;
}
