/** Housekeeping of the accounts feature: expired sessions, email links and spent captcha tokens are deleted hourly. */
import { HOUR } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { purgeExpired } from './email-tokens.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'clock' | 'log'>;

export async function runOnce(deps: Deps): Promise<boolean> {
  const removed = await purgeExpired(deps.db, deps.clock.now());
  if (removed > 0) deps.log.info({ removed }, 'expired sessions, links and captcha tokens purged');
  // Never "found more work": one pass removes everything expired, the next can wait an hour.
  return false;
}

export function accountsWorker(deps: Deps): Worker {
  return { name: 'accounts-cleanup', intervalMs: HOUR, runOnce: () => runOnce(deps) };
}
