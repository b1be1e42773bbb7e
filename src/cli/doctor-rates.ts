/**
 * `gatewayd doctor`'s rate check: asks every [[pricing.sources]] entry once, now, as the background
 * fetcher would, and prints each source's rates or its error, the rates it would set aside (an
 * outlier, or outside the plausible range), then whether each configured currency would be priced
 * (enough fresh, plausible sources that agree) or refused.
 */
import type { Config } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { createLogger } from '../lib/log.js';
import type { Finding } from './doctor-findings.js';
import { formatDecimal } from '../pricing/decimal.js';
import { RateBook, refusalReason } from '../pricing/rate-book.js';
import { runOnce } from '../pricing/rates.worker.js';

export async function checkRates(config: Config, timeoutMs: number): Promise<Finding[]> {
  const book = new RateBook(config.pricing);
  if (!book.enabled) {
    return [{ level: 'ok', check: 'rates', detail: 'no [[pricing.sources]]: invoices priced in a fiat currency are refused (503 rate_unavailable)' }];
  }
  await runOnce({ clock: systemClock, log: createLogger('silent'), rates: book }, timeoutMs);
  const now = systemClock.now();
  const findings: Finding[] = book.status(now).map((s) => {
    const where = `${s.name} (${s.host})`;
    if (s.currencies.length === 0) return { level: 'warn', check: 'rates', detail: `${where}: quotes none of pricing.currencies; it is never asked` };
    if (s.fetched_at === null) return { level: 'warn', check: 'rates', detail: `${where}: ${s.last_error ?? 'no answer'}` };
    const rates = Object.entries(s.rates).map(([c, r]) => `${c} ${r}`);
    const missing = s.currencies.filter((c) => !(c in s.rates));
    return {
      level: 'ok',
      check: 'rates',
      detail: `${where}: ${rates.join(', ')} (age ${s.age_seconds} s)${missing.length ? `; no rate for ${missing.join(', ')}` : ''}`,
    };
  });
  const refused: string[] = [];
  const priced: string[] = [];
  for (const a of book.assessAll(now)) {
    for (const x of a.setAside) {
      const why =
        x.reason === 'outlier'
          ? `outside the rates that agree within pricing.max_spread_percent (${config.pricing.max_spread_percent} %)`
          : `outside the plausible range ${rangeText(book, a.currency)} (pricing.rate_bounds)`;
      findings.push({ level: 'warn', check: 'rates', detail: `${a.currency}: ${x.name} ${formatDecimal(x.rate)} is set aside, ${why}` });
    }
    if (a.quote) priced.push(`${a.currency} ${formatDecimal(a.quote.rate)}`);
    else refused.push(`${a.currency} (${refusalReason(a.refusal!)})`);
  }
  if (refused.length > 0) findings.push({ level: 'fail', check: 'rates', detail: `these currencies would be refused now: ${refused.join(', ')}` });
  if (priced.length > 0) findings.push({ level: 'ok', check: 'rates', detail: `median rates now: ${priced.join(', ')}` });
  return findings;
}

function rangeText(book: RateBook, currency: string): string {
  const range = book.range(currency);
  return range ? `${formatDecimal(range.min)} to ${formatDecimal(range.max)}` : 'none';
}
