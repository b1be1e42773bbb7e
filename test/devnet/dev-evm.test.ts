/**
 * `gatewayd dev` with its EVM devnets: the real executable starts the five simulated twins beside
 * tron-devnet, lists each with its chain id, JSON-RPC URL and tokens, and enables them as its
 * [[evm.networks]] (replacing the file's own, real ones included, which would otherwise refuse to
 * mix with a test network); `gatewayd dev transfer --network` puts a transfer on one of them that
 * the real EvmReader reads from the printed URL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EvmReader, RangeCaps } from '../../src/chains/evm/reader.js';
import { EvmRpcClient } from '../../src/chains/evm/rpc.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { loadConfig } from '../../src/config.js';
import { DEV_EVM_NETWORKS, startDev } from '../../src/devnet/dev.js';
import { systemClock } from '../../src/lib/clock.js';
import { tempDir } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { freePort, runCli, startGateway, writeConfig } from '../helpers/process.js';

const PAYEE = '0x52908400098527886E0F7030069857D2E4169EE7';
/** A real network in the file: `gatewayd dev` replaces it, as it replaces tron.network. */
const REAL_EVM = { networks: [{ id: 'ethereum-mainnet', providers: [{ url: 'https://ethereum-rpc.example' }] }] };

test('gatewayd dev lists the five EVM devnets it simulates; dev transfer --network lands a transfer the EvmReader reads at the printed URL', async (t) => {
  const dev = await startGateway({ command: ['dev'], config: { dev: { block_interval_ms: 500, evm_finality_lag: 4 }, evm: REAL_EVM, log: { level: 'warn' } } });
  t.after(() => dev.kill());
  await until('the banner', async () => (/eth_getLogs up to 1000 blocks/.test(dev.output()) ? true : undefined));
  const out = dev.output();
  assert.match(out, /tron-devnet, a simulated chain\. Test network: no real money\./);
  assert.match(out, /EVM +http:\/\/127\.0\.0\.1:\d+\/NETWORK +JSON-RPC; block every 500 ms, finalized 4 blocks later \(safe 2\)/);
  assert.doesNotMatch(out, /ethereum-mainnet/);
  const urls = new Map<string, string>();
  for (const id of DEV_EVM_NETWORKS) {
    const network = NETWORKS[id];
    const line = new RegExp(`^ +${id} +chain id ${network.chainId} +(http://127\\.0\\.0\\.1:\\d+/${id}) +(.*)$`, 'm').exec(out);
    assert.ok(line, `${id} is listed:\n${out}`);
    for (const token of network.tokens) assert.ok(line[2]!.includes(`${token.symbol} ${token.contract} (${token.decimals})`), `${id} ${token.symbol}`);
    urls.set(id, line[1]!);
    const chainId = await fetch(line[1]!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    assert.equal(((await chainId.json()) as { result: string }).result, `0x${network.chainId!.toString(16)}`);
  }
  assert.equal(urls.size, 5);
  assert.match(out, /gatewayd dev transfer --url \S+ \[--network N\] \[--token T\] --to ADDRESS/);
  const health = (await (await fetch(`${dev.baseUrl}/api/v1/health`)).json()) as { network: string };
  assert.equal(health.network, 'tron-devnet');

  const cli = (args: string[]) => runCli([...args, '--config', dev.configPath, '--json']);
  const sent = cli(['dev', 'transfer', '--network', 'bsc-devnet', '--to', PAYEE.toLowerCase(), '--amount', '3.000000000000000007']);
  assert.equal(sent.status, 0, sent.stderr);
  const answer = JSON.parse(sent.stdout) as Record<string, any>;
  assert.deepEqual([answer.network, answer.to, answer.raw_amount], ['bsc-devnet', PAYEE, '3000000000000000007']);
  const mistyped = cli(['dev', 'transfer', '--network', 'bsc-devnet', '--to', `${PAYEE.slice(0, -1)}e`, '--amount', '1']);
  assert.equal(mistyped.status, 1);
  assert.match(mistyped.stderr, /to: expected an EVM address on bsc-devnet: the address's checksum \(EIP-55 letter case\) is wrong/);
  const tooFine = cli(['dev', 'transfer', '--to', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', '--amount', '1.000000000000000007']);
  assert.equal(tooFine.status, 2, 'without an EVM --network, --amount stays a USDT amount');

  const reader = new EvmReader({
    network: NETWORKS['bsc-devnet'],
    rpc: new EvmRpcClient({ url: urls.get('bsc-devnet')!, clock: systemClock }),
    caps: new RangeCaps(),
  });
  const read = await until('the transfer, final', async () => {
    const final = await reader.finalHead();
    if (final.number < BigInt(answer.block_number)) return undefined;
    return reader.readTransfers({ from: BigInt(answer.block_number), to: final.number, recipients: [PAYEE], finalAtOrBelow: final.number });
  });
  assert.deepEqual(
    read.transfers.map((x) => [x.txHash, x.raw, x.blockHash, x.finality]),
    [[answer.tx_id, 3_000_000_000_000_000_007n, answer.block_hash, 'final']],
  );
  assert.equal(await dev.stop(), 0);
});

test('startDev enables the five devnets as config.evmNetworks, each with the simulator as its one provider', async (t) => {
  const dir = tempDir('gatewayd-dev-evm-');
  const path = writeConfig(dir, { server: { listen: `127.0.0.1:${await freePort()}` }, evm: REAL_EVM, log: { level: 'warn' } });
  const dev = await startDev((overrides) => loadConfig({ path, env: {}, overrides, devMode: true }));
  t.after(() => dev.stop());
  assert.deepEqual(
    dev.config.networks.map((n) => n.id),
    ['tron-devnet', ...DEV_EVM_NETWORKS, 'solana-devnet', 'ton-devnet'],
  );
  for (const e of dev.config.evmNetworks) {
    assert.deepEqual(
      e.providers.map((p) => p.url),
      [dev.evm.urlOf(e.network.id)],
    );
    assert.deepEqual(e.finality, { kind: 'tag', tag: 'finalized' });
    assert.equal(e.pollMs, 1000);
  }
  assert.deepEqual(dev.evm.networks, DEV_EVM_NETWORKS);
});
