/**
 * Whether payments are confirmed live, for /health, the console banner and the checkout: the
 * watcher's state and lag classified into one condition, with the moment that condition began.
 */
import type { WatcherStatus } from '../core/watcher-status.js';
import type { Clock } from '../lib/clock.js';

/** Coverage older than this means payments are confirmed late: the console says so. */
export const BEHIND_AFTER_SECONDS = 300;

export type LiveCondition = 'ok' | 'behind' | 'down';

export interface LivePayments {
  /** false while the watcher cannot confirm payments (degraded): the API still serves. */
  enabled: boolean;
  condition: LiveCondition;
  lagSeconds: number | null;
  /** When the current condition began (ms), null while all is well. */
  since: number | null;
}

function classify(state: WatcherStatus['state'], lagSeconds: number | null): LiveCondition {
  if (state === 'degraded') return 'down';
  if (lagSeconds !== null && lagSeconds > BEHIND_AFTER_SECONDS) return 'behind';
  return 'ok';
}

/**
 * The watcher's status object (AppDeps.watcherStatus). The watcher keeps assigning `state` and
 * `lagSeconds`; the object notes the moment the condition they describe changes, so the console can
 * say how long it has lasted without the watcher knowing about it.
 */
export function createWatcherStatus(clock: Clock): WatcherStatus {
  let state: WatcherStatus['state'] = 'stopped';
  let lagSeconds: number | null = null;
  let condition: LiveCondition = 'ok';
  let since: number | null = null;
  const note = () => {
    const next = classify(state, lagSeconds);
    if (next === condition) return;
    condition = next;
    since = next === 'ok' ? null : clock.now();
  };
  return {
    get state() {
      return state;
    },
    set state(value) {
      state = value;
      note();
    },
    get lagSeconds() {
      return lagSeconds;
    },
    set lagSeconds(value) {
      lagSeconds = value;
      note();
    },
    get since() {
      return since;
    },
  };
}

export function livePayments(status: WatcherStatus): LivePayments {
  const condition = classify(status.state, status.lagSeconds);
  return { enabled: condition !== 'down', condition, lagSeconds: status.lagSeconds, since: condition === 'ok' ? null : (status.since ?? null) };
}
