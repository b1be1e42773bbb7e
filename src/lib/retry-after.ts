/**
 * Retry-After (RFC 9110, 10.2.3): a number of seconds, or an HTTP-date. Returns the wait it asks
 * for in ms from `nowMs` (0 for a date already past), or undefined when the header is absent or
 * malformed. Callers cap it and never wait less than their own schedule (see the webhook deliverer).
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d{1,10}$/.test(value)) return Number(value) * 1000;
  // An HTTP-date names its weekday and "GMT"; anything else (an ISO date, a bare number with a
  // sign or a fraction) is not a Retry-After value.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
