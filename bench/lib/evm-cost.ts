/**
 * The EVM watcher's cost (`npm run bench:chain evm`): requests (HTTP) and calls (JSON-RPC methods,
 * a batch counts each) a day PER provider, in the idle and the busy shape, for 1, 100 and 1 000
 * watched addresses and one or two providers. A real node (anvil as ethereum-devnet, 1 s blocks:
 * five blocks are mined for every 5 s of simulated time) behind counting proxies; the watcher and
 * the app share a manual clock; one simulated hour, scaled to a day. Busy: one invoice open all the
 * hour (on one address) besides the watched addresses. Printed, never asserted.
 */
import { randomBytes } from 'node:crypto';
import { toChecksumAddress } from '../../src/chains/evm/address.js';
import { HOUR, SECOND } from '../../src/lib/clock.js';
import { anvilSkip } from '../../test/chains/evm/anvil.js';
import { startEvmHarness } from '../../test/payments/evm-harness.js';

function randomEvmAddress(): string {
  return toChecksumAddress(`0x${randomBytes(20).toString('hex')}`);
}

async function measure(addresses: number, providers: number, busy: boolean): Promise<string> {
  const h = await startEvmHarness('ethereum-devnet', { providers });
  try {
    const merchant = await h.wallet(randomEvmAddress());
    for (let i = 1; i < addresses; i++) await h.wallet(randomEvmAddress(), undefined, merchant);
    if (busy) {
      const paid = randomEvmAddress();
      await h.wallet(paid, undefined, merchant);
      await h.invoice(merchant, paid, 1_000_001n, { expiresInMs: 2 * HOUR });
    }
    await h.pass(0);
    const before = h.providers.map((p) => ({ calls: p.calls.length, requests: p.requestTimes.length }));
    const steps = HOUR / (5 * SECOND);
    for (let i = 0; i < steps; i++) {
      await h.chain.mine(5);
      await h.pass(5 * SECOND);
    }
    const perDay = h.providers.map((p, i) => ({
      calls: (p.calls.length - before[i]!.calls) * 24,
      requests: (p.requestTimes.length - before[i]!.requests) * 24,
    }));
    return `${busy ? 'busy' : 'idle'} | ${addresses} | ${providers} | ${perDay.map((d) => `${d.requests} / ${d.calls}`).join(' ; ')}`;
  } finally {
    await h.close();
  }
}

export async function evmCosts(): Promise<void> {
  const skip = anvilSkip();
  if (skip) {
    console.log(`\n5. EVM watcher: skipped (${skip})`);
    return;
  }
  console.log('\n5. EVM watcher, requests / calls a day per provider (simulated hour of 1 s blocks, scaled to a day)');
  console.log('shape | watched addresses | providers | per provider: requests / calls');
  for (const busy of [false, true]) {
    for (const addresses of [1, 100, 1000]) {
      for (const providers of [1, 2]) console.log(await measure(addresses, providers, busy));
    }
  }
}
