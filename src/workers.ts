/** The background jobs `serve` runs. Each feature adds its worker here; tests call runOnce directly. */
import type { AppDeps } from './http/context.js';
import type { Worker } from './lib/loop.js';
import { accountsWorker } from './accounts/accounts.worker.js';
import { chainWorker } from './chain/chain.worker.js';

export function createWorkers(deps: AppDeps): Worker[] {
  return [accountsWorker(deps), chainWorker(deps)];
}

/** Repairs left by a crash, run once before the workers start (e.g. deliveries stuck in `sending`). */
export async function recoverAfterCrash(deps: AppDeps): Promise<void> {
  void deps;
}
