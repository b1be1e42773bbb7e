/**
 * The TRON stand-in for tests: the product's simulated node (src/devnet/tron-node.ts), a real
 * loopback HTTP server answering java-tron's block endpoints with real shapes and filler traffic,
 * plus `pay()`, the short form tests use for a payment at a block time.
 *
 *   const tg = await startTronGrid({ now: () => t.clock.now() });
 *   const p = tg.pay({ to: address, amount: 41_677_389n, blockTimestamp: ms });   // lands in the first block at or after ms
 *   tg.fail('blockinfo', { status: 429, body: { Error: '... suspended for 30 s' } });
 *   tg.count('blockinfo');  await tg.close();
 */
import {
  startSimulatedTron,
  type SimEndpoint,
  type SimFault,
  type SimTransferResult,
  type SimulatedTron,
  type SimulatedTronOptions,
} from '../../src/devnet/tron-node.js';

export type Endpoint = SimEndpoint;
export type Fault = SimFault;

export interface PayOptions {
  to: string;
  amount: bigint;
  /** The payment lands in the first block at or after this time. */
  blockTimestamp: number;
  from?: string;
  contract?: string;
  /** success (default), or a failed execution: 'failed' = out of energy, 'revert'. */
  receipt?: 'success' | 'failed' | 'revert';
}

export interface FakeTronGrid extends SimulatedTron {
  pay(opts: PayOptions): SimTransferResult;
}

export async function startTronGrid(options: SimulatedTronOptions = {}): Promise<FakeTronGrid> {
  const node = await startSimulatedTron(options);
  return Object.assign(node, {
    pay(opts: PayOptions): SimTransferResult {
      const result = opts.receipt === 'failed' ? 'FAILED' : opts.receipt === 'revert' ? 'REVERT' : 'SUCCESS';
      return node.transfer({ to: opts.to, amount: opts.amount, at: opts.blockTimestamp, from: opts.from, contract: opts.contract, result });
    },
  });
}
