/**
 * An EVM devnet on a real anvil for the reader's tests: anvil with the network's chain id, the
 * test token (token-bytecode.ts) installed at each pinned contract of the network and, as a
 * look-alike, at another address with the same symbol. `pay` sends a real transaction (mined at
 * once) that emits Transfer logs.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { systemClock, type Clock } from '../../../src/lib/clock.js';
import { EvmReader, RangeCaps, type EvmReaderOptions } from '../../../src/chains/evm/reader.js';
import { EvmRpcClient } from '../../../src/chains/evm/rpc.js';
import { NETWORKS, type EvmNetworkId, type Network } from '../../../src/chains/networks.js';
import { DEV_ACCOUNT, startAnvil, type Anvil } from './anvil.js';
import { tokenRuntime, transferCalldata } from './token-bytecode.js';

/** Another contract that calls itself USDT too. */
export const LOOKALIKE = '0x000000000000000000000000000000000000dEaD';

/** Watched recipients (any 20 bytes will do: logs need no keys). */
export const ALICE = '0x1111111111111111111111111111111111111111';
export const BOB = '0x2222222222222222222222222222222222222222';
export const CAROL = '0x3333333333333333333333333333333333333333';

export interface DevChain {
  anvil: Anvil;
  network: Readonly<Network>;
  /** Sends `transfer` (or a batch of pairs) on a token contract; returns the mined tx and block. */
  pay(contract: string, ...pairs: Array<[to: string, value: bigint]>): Promise<{ txHash: string; blockNumber: bigint; blockHash: string }>;
  mine(blocks: number): Promise<void>;
  latest(): Promise<bigint>;
  reader(url?: string, extra?: Partial<EvmReaderOptions> & { clock?: Clock }): EvmReader;
  close(): Promise<void>;
}

export async function startDevChain(id: EvmNetworkId): Promise<DevChain> {
  const network = NETWORKS[id];
  const anvil = await startAnvil({ chainId: network.chainId! });
  for (const t of network.tokens) await anvil.rpc('anvil_setCode', [t.contract, tokenRuntime(t.symbol)]);
  await anvil.rpc('anvil_setCode', [LOOKALIKE, tokenRuntime('USDT')]);
  // A few blocks first, so that `finalized` (4 behind) is not block 0.
  await anvil.rpc('anvil_mine', ['0x8']);
  return {
    anvil,
    network,
    async pay(contract, ...pairs) {
      const txHash: string = await anvil.rpc('eth_sendTransaction', [{ from: DEV_ACCOUNT, to: contract, data: transferCalldata(...pairs), gas: '0x100000' }]);
      // Anvil mines at once, but may answer the send before the receipt is there.
      for (let tries = 0; ; tries++) {
        const receipt = await anvil.rpc('eth_getTransactionReceipt', [txHash]);
        if (receipt) return { txHash, blockNumber: BigInt(receipt.blockNumber), blockHash: receipt.blockHash };
        if (tries >= 100) throw new Error(`transaction ${txHash} was not mined`);
        await delay(20);
      }
    },
    async mine(blocks) {
      await anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    async latest() {
      return BigInt(await anvil.rpc('eth_blockNumber'));
    },
    reader(url = anvil.url, extra = {}) {
      const { clock, ...options } = extra;
      const rpc = new EvmRpcClient({ url, clock: clock ?? systemClock, name: url });
      return new EvmReader({ network, rpc, caps: options.caps ?? new RangeCaps(), ...options });
    },
    close: () => anvil.close(),
  };
}
