/**
 * What the watcher of a per-account network (Solana, TON: no log filter over blocks, one read per
 * watched account) keeps in memory between its passes, and what /health shows of it. The durable
 * state is the payments layer's (the network's cursor, unread ranges and disputes); built once per
 * enabled network at start (src/payments/watch/account.runtime.ts), kept in `deps.accounts`.
 */
import type { TransferReader } from './family.js';
import type { Network, NetworkId } from './networks.js';

export type AccountProviderState = 'ok' | 'backing_off' | 'failing';

export interface AccountProviderHealth {
  /** The provider's scheme and host, never its path, query or key. */
  name: string;
  state: AccountProviderState;
  lastError: string | null;
  lastOkAt: number | null;
  /** Not asked before this time (a Retry-After, or a backoff after failures); null when it may be asked. */
  retryAt: number | null;
  consecutiveFailures: number;
  failures: number;
  /** What it refused, once each in plain words. */
  refuses: string[];
  /** Transactions it listed that a check refused (failed, aborted, another mint...). */
  droppedLogs: number;
  /** Transfers it showed otherwise than the other provider, or not at all (an omission or a forgery). */
  disagreements: number;
}

export interface AccountProvider {
  reader: TransferReader;
  health: AccountProviderHealth;
}

export interface AccountFigures {
  state: 'stopped' | 'idle' | 'running' | 'degraded';
  /** Every watched account is read as final up to this position (slot, masterchain seqno); null before the first read. */
  cursorBlock: number | null;
  /** The lower of the final heads the asked providers showed. */
  finalHead: number | null;
  reason: string | null;
  lastPassAt: number | null;
  /** Invoices were open at the last pass (the accounts they ask are read every poll). */
  busy: boolean;
  /** Accounts read at the last poll of the open invoices' accounts, and at the last sweep of all. */
  openAccounts: number;
  sweptAccounts: number;
}

export interface AccountWatch {
  network: Readonly<Network>;
  /** Between reads of the open invoices' accounts while an invoice is open on this network. */
  pollMs: number;
  /** Between reads of every registered account (the slow sweep that records late and wrong payments). */
  sweepMs: number;
  providers: AccountProvider[];
  figures: AccountFigures;
  /**
   * Per account and token (`address token_contract`), the position up to which the polls of open invoices have read it (in memory: after
   * a restart every account starts again at the durable cursor, so nothing is skipped).
   */
  readThrough: Map<string, bigint>;
  nextPollAt: number;
  nextSweepAt: number;
  stopping: boolean;
}

export type AccountWatches = ReadonlyMap<NetworkId, AccountWatch>;
