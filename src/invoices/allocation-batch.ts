/**
 * What the units of one PostgreSQL group-commit batch that run at once (GroupCommit.runPgWhole,
 * unitsRunAtOnce) must know of each other for allocation.repo.ts: a unit's reads may run before
 * another unit's writes. One record per batch transaction, dropped with it; none for a transaction
 * whose units run one after another (each sees what the earlier ones wrote).
 */
import type { Tx } from '../db/database.js';
import { unitsRunAtOnce } from './group-commit.js';

/** A price's pool on one address: the key of its cursor row (amount_cursors). */
export type CursorKey = { network: string; token_contract: string; address: string; base_amount: number };

interface BatchAllocations {
  /** The cursors claimed so far. */
  claimed: Set<string>;
  /** The amounts chosen so far, by network, contract and address. */
  chosen: Map<string, Set<bigint>>;
  /** Whether an address has another registrant, by network, address and merchant. */
  shared: Map<string, Promise<boolean>>;
}

const batches = new WeakMap<Tx, BatchAllocations>();

function batchOf(tx: Tx): BatchAllocations | undefined {
  if (!unitsRunAtOnce(tx)) return undefined;
  let batch = batches.get(tx);
  if (!batch) batches.set(tx, (batch = { claimed: new Set(), chosen: new Map(), shared: new Map() }));
  return batch;
}

/** Whether another unit of this at-once transaction claimed this cursor before (and records this claim). */
export function claimedAlongside(tx: Tx, key: CursorKey): boolean {
  const batch = batchOf(tx);
  if (!batch) return false;
  const cursor = `${key.network} ${key.token_contract} ${key.address} ${key.base_amount}`;
  if (batch.claimed.has(cursor)) return true;
  batch.claimed.add(cursor);
  return false;
}

/**
 * Amounts chosen on this address by units of the same transaction that run at once: a unit's probe
 * of used amounts may have run before another unit's reservation was written, so what the batch
 * chose is kept here too, and chooseAmount skips it. Undefined when the units run one after another.
 */
export function chosenAlongside(tx: Tx, key: CursorKey): Set<bigint> | undefined {
  const batch = batchOf(tx);
  if (!batch) return undefined;
  const address = `${key.network} ${key.token_contract} ${key.address}`;
  let chosen = batch.chosen.get(address);
  if (!chosen) batch.chosen.set(address, (chosen = new Set()));
  return chosen;
}

/**
 * shared() once per at-once transaction, address and merchant (every claimant of a batch's cursor that
 * needs it asks it, and one batch's answers could not differ in a way that matters: a registration
 * that commits during the batch races it whichever answer it gets); shared() itself elsewhere.
 */
export function sharedOnce(tx: Tx, key: CursorKey, merchantId: string, shared: () => Promise<boolean>): Promise<boolean> {
  const answers = batchOf(tx)?.shared;
  if (!answers) return shared();
  const which = `${key.network} ${key.address} ${merchantId}`;
  let answer = answers.get(which);
  if (!answer) answers.set(which, (answer = shared()));
  return answer;
}

/**
 * Thrown where a unit must see every other unit's writes, in a transaction whose units run at once:
 * the group commit then runs the batch again unit by unit (GroupCommit.runPg).
 */
export class RunAlone extends Error {
  constructor(what: string) {
    super(`${what} needs the batch's units run one after another`);
  }
}
