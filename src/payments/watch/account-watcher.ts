/**
 * The watcher of a per-account network (Solana, TON): one worker per network of [[solana.networks]]
 * and [[ton.networks]], reading through the family's reader and recording through the payments
 * layer. These families have no log filter over blocks, so every read costs per watched account,
 * and the watcher's shape follows the open invoices, not every address ever registered:
 *
 * - Nothing to watch (no wallet receives on the network): no request at all.
 * - Idle (no invoice open there): a sweep every 10 minutes over every registered account, from the
 *   network's cursor to the final head, so late and wrong payments are still recorded.
 * - Busy (an invoice open): every poll (10 s by default) a final read of the accounts open invoices
 *   ask (on Solana only the token accounts of the tokens they ask), each from where it was last
 *   read; the sweep of all accounts goes on every 10 minutes.
 *
 * Both read only what is final (Solana: finalized; TON: committed in the masterchain), through two
 * providers where two are configured (account-read.ts). docs/payments.md ("Solana and TON") gives
 * the measured cost.
 */
import type { AccountWatch } from '../../chains/account-watch.js';
import type { NetworkId } from '../../chains/networks.js';
import type { Worker } from '../../lib/loop.js';
import { openInvoices } from '../../invoices/invoice-payments.js';
import { openInvoiceTargets } from '../../invoices/open-targets.js';
import { listNetworkAddresses } from '../../wallets/wallets.repo.js';
import { accountReaders, agreedFinalHead, pollRead, sweepRead } from './account-read.js';
import type { AccountWatches } from '../../chains/account-watch.js';
import type { CoreDeps } from '../../core/core-deps.js';
import type { Mailer } from '../../email/mailer.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { accounts: AccountWatches; mailer: Mailer };

export function accountWorker(deps: Deps, network: NetworkId): Worker {
  const w = deps.accounts.get(network);
  if (!w) throw new Error(`no watcher state for ${network}`);
  return {
    name: `chain-${network}`,
    // A pass every poll interval asks the database only, unless a read is due: an invoice created
    // while the network is idle is read within one poll.
    intervalMs: w.pollMs,
    runOnce: () => runAccountOnce(deps, w),
    onStop: () => {
      w.stopping = true;
    },
  };
}

/** One pass: what is due of a sweep and a poll. A pass that throws is a failed pass: degraded with the reason, tried again next time. */
export async function runAccountOnce(deps: Deps, w: AccountWatch): Promise<boolean> {
  try {
    await accountPass(deps, w);
  } catch (err) {
    const reason = `pass failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    if (w.figures.reason !== reason) deps.log.error({ err, network: w.network.id }, 'chain: watcher pass failed');
    w.figures.reason = reason;
    w.figures.state = 'degraded';
  }
  return false;
}

async function accountPass(deps: Deps, w: AccountWatch): Promise<void> {
  const now = deps.clock.now();
  const open = await openInvoiceTargets(deps.db, w.network);
  const all = [...new Set([...(await listNetworkAddresses(deps.db, w.network.id)), ...open.map((t) => t.address)])];
  const { count, oldestCreatedAt } = await openInvoices(deps.db, w.network);
  const wasBusy = w.figures.busy;
  w.figures.busy = count > 0;
  if (w.figures.busy && !wasBusy) w.nextPollAt = now;
  w.figures.lastPassAt = now;
  if (all.length === 0) {
    w.figures.state = 'idle';
    w.figures.reason = null;
    // The first wallet registered is swept at the next pass.
    w.nextSweepAt = now;
    return;
  }
  const sweepDue = now >= w.nextSweepAt;
  const pollDue = w.figures.busy && open.length > 0 && now >= w.nextPollAt;
  if ((sweepDue || pollDue) && !w.stopping) {
    w.figures.reason = null;
    if (pollDue) w.nextPollAt = now + w.pollMs;
    const asked = accountReaders(w, now);
    if (typeof asked === 'string') {
      w.figures.reason = asked;
    } else {
      const final = await agreedFinalHead(deps, w, asked);
      if (final) {
        if (sweepDue) {
          await sweepRead(deps, w, asked, final, all, oldestCreatedAt);
          // A sweep that could not finish is tried again at the next poll, not 10 minutes later.
          w.nextSweepAt = w.figures.reason === null ? now + w.sweepMs : now + w.pollMs;
        }
        if (pollDue && w.figures.reason === null) await pollRead(deps, w, asked, final, open);
      }
    }
  }
  w.figures.state = w.figures.reason !== null ? 'degraded' : w.figures.busy ? 'running' : 'idle';
}
