/**
 * `gatewayd dev`: the whole gateway on tron-devnet, with the simulated TRON node on loopback as its
 * only provider, and the simulated EVM devnets (evm-node.ts: ethereum-, bsc-, polygon-, arbitrum-
 * and base-devnet) enabled as its [[evm.networks]], each with the simulator as its provider, and
 * solana-devnet (solana-node.ts, a JSON-RPC node) and ton-devnet (ton-index.ts, a toncenter v3
 * index) as its [[solana.networks]] and [[ton.networks]], likewise. Solidification works as on mainnet, scaled down (dev.block_interval_ms,
 * dev.solidity_lag); every block carries filler traffic (strangers' USDT, TRX, failed calls,
 * zero-value look-alikes, fake tokens). Payments made with `gatewayd dev pay` are transactions in
 * the node's blocks: the real watcher, verifier, invoice states, events and signed webhooks handle
 * them. The database is a fresh one in a temporary folder, removed at exit, unless --database names
 * one (which must be a devnet database: a database of another network is refused).
 * Fiat prices work out of the box: unless the configuration names its own [[pricing.sources]], a
 * simulated rate source on loopback (rate-source.ts) answers as CoinGecko, Kraken and Coinbase.
 * `gatewayd serve` never imports this module.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { devUrlFlag, parseListen, type Config } from '../config.js';
import { EVM_NETWORK_IDS, NETWORKS as CHAIN_NETWORKS, type EvmNetworkId } from '../chains/networks.js';
import { NETWORKS } from '../lib/tron.js';
import { createLogger, type Log } from '../lib/log.js';
import { startServer, type RunningServer } from '../serve.js';
import { newDevToken, removeDevToken, writeDevToken } from '../cli/dev-token.js';
import { devRoutes } from './dev.routes.js';
import { startSimulatedTron, type SimulatedTron } from './tron-node.js';
import { startSimulatedEvm, type SimulatedEvm } from './evm-node.js';
import { startSimulatedRates, type SimulatedRates } from './rate-source.js';
import { startSimulatedSolana, type SimulatedSolana } from './solana-node.js';
import { startSimulatedTon, type SimulatedTon } from './ton-index.js';
import { SOURCE_KINDS } from '../pricing/sources.js';

export interface DevOptions {
  /** Keep state in this database file (created when missing); default: a fresh temporary one. */
  database?: string;
}

export interface RunningDev {
  /** The gateway (API, console, checkout, /_dev control routes). */
  url: string;
  nodeUrl: string;
  /** The simulated rate source, when the configuration named no [[pricing.sources]] of its own. */
  rates: SimulatedRates | undefined;
  databasePath: string;
  /** True when the database is a temporary one, removed by stop(). */
  temporary: boolean;
  config: Config;
  node: SimulatedTron;
  /** The simulated EVM devnets (one server, a path per network). */
  evm: SimulatedEvm;
  /** The simulated solana-devnet (JSON-RPC) and ton-devnet (toncenter v3 index). */
  solana: SimulatedSolana;
  ton: SimulatedTon;
  server: RunningServer;
  /** The control token of /_dev/ (printed at start), and the file the subcommands read it from. */
  token: string;
  tokenPath: string;
  stop(): Promise<void>;
}

/** How `gatewayd dev` names its claim on a database, for the refusal line. */
export const DEV_CLAIM = { network: NETWORKS.devnet.id, chosenBy: '`gatewayd dev`' } as const;

/** The EVM networks `gatewayd dev` simulates: every `{chain}-devnet` twin of the registry. */
export const DEV_EVM_NETWORKS: readonly EvmNetworkId[] = EVM_NETWORK_IDS.filter((id) => id.endsWith('-devnet'));

/**
 * [[evm.networks]] under `gatewayd dev`: the simulated twins, each with the simulator as its one
 * provider (unpaced, its range cap learned from its refusals as from a real provider's), polled
 * every second. They replace the file's own entries: a dev instance watches simulated chains only.
 */
export function devEvmConfig(urlOf: (id: EvmNetworkId) => string): Record<string, unknown> {
  return {
    networks: DEV_EVM_NETWORKS.map((id) => ({
      id,
      providers: [{ url: urlOf(id), requests_per_second: 0, timeout_seconds: 10, max_block_range: 0 }],
      finality: 'finalized',
      poll_interval_seconds: 1,
    })),
  };
}

/**
 * [[solana.networks]] and [[ton.networks]] under `gatewayd dev`: solana-devnet and ton-devnet, each
 * with its simulator as its one provider (unpaced), polled every second. Like the EVM devnets, they
 * replace the file's own entries.
 */
export function devAccountConfig(solanaUrl: string, tonUrl: string): { solana: Record<string, unknown>; ton: Record<string, unknown> } {
  return {
    solana: { networks: [{ id: 'solana-devnet', providers: [{ url: solanaUrl, requests_per_second: 0, timeout_seconds: 10 }], poll_interval_seconds: 1 }] },
    ton: {
      networks: [{ id: 'ton-devnet', providers: [{ url: tonUrl, kind: 'toncenter', requests_per_second: 0, timeout_seconds: 10 }], poll_interval_seconds: 1 }],
    },
  };
}

/**
 * Starts the node, then the gateway pointed at it. `load` reads the configuration with the keys
 * `gatewayd dev` sets over the file and the environment (tron.network, tron.api_url, ...).
 */
export async function startDev(load: (overrides: Record<string, Record<string, unknown>>) => Config, options: DevOptions = {}): Promise<RunningDev> {
  const temporaryDir = options.database === undefined ? mkdtempSync(join(tmpdir(), 'gatewayd-dev-')) : undefined;
  const databasePath = options.database === undefined ? join(temporaryDir!, 'gateway.db') : resolve(options.database);
  const removeTemporary = () => {
    if (temporaryDir) rmSync(temporaryDir, { recursive: true, force: true });
  };
  const overrides = (apiUrl: string, evmUrl: (id: EvmNetworkId) => string, solanaUrl: string, tonUrl: string): Record<string, Record<string, unknown>> => ({
    tron: { network: 'devnet', api_url: apiUrl, poll_interval_seconds: 1 },
    evm: devEvmConfig(evmUrl),
    ...devAccountConfig(solanaUrl, tonUrl),
    database: { path: databasePath },
  });
  let node: SimulatedTron | undefined;
  let evm: SimulatedEvm | undefined;
  let rates: SimulatedRates | undefined;
  let solana: SimulatedSolana | undefined;
  let ton: SimulatedTon | undefined;
  try {
    // First read: where the node listens and how fast its chain goes (the node's URL is not known yet).
    const first = load(overrides('http://127.0.0.1:1', (id) => `http://127.0.0.1:1/${id}`, 'http://127.0.0.1:1', 'http://127.0.0.1:1'));
    const listen = parseListen(first.dev.node_listen)!;
    if (listen.host !== '127.0.0.1') throw new Error(`dev.node_listen ${first.dev.node_listen}: the simulated node listens on 127.0.0.1 only`);
    node = await startSimulatedTron({
      port: listen.port,
      usdtContract: NETWORKS.devnet.usdtContract,
      blockIntervalMs: first.dev.block_interval_ms,
      solidityLag: first.dev.solidity_lag,
      fillerPerBlock: first.dev.filler_per_block,
      seed: randomBytes(4).readUInt32BE(0),
    });
    const evmListen = parseListen(first.dev.evm_listen)!;
    if (evmListen.host !== '127.0.0.1') throw new Error(`dev.evm_listen ${first.dev.evm_listen}: the simulated EVM devnets listen on 127.0.0.1 only`);
    evm = await startSimulatedEvm({
      networks: DEV_EVM_NETWORKS.map((id) => CHAIN_NETWORKS[id]),
      port: evmListen.port,
      blockIntervalMs: first.dev.block_interval_ms,
      finalityLag: first.dev.evm_finality_lag,
      fillerPerBlock: first.dev.filler_per_block,
      maxBlockRange: first.dev.evm_max_block_range,
      seed: randomBytes(4).readUInt32BE(0),
    });
    const startedEvm = evm;
    solana = await startSimulatedSolana({ blockIntervalMs: first.dev.block_interval_ms, finalityLag: Math.max(1, first.dev.solidity_lag) });
    ton = await startSimulatedTon({ blockIntervalMs: first.dev.block_interval_ms });
    const startedSolana = solana;
    const startedTon = ton;
    const withNode = overrides(node.url, (id) => startedEvm.urlOf(id), solana.url, ton.url);
    if (first.pricing.sources.length === 0) {
      rates = await startSimulatedRates();
      withNode.pricing = { sources: SOURCE_KINDS.map((kind) => ({ kind, url: rates!.url })) };
    }
    // A stable secret for this process without the "run gatewayd init" warning: sessions end with the process anyway.
    if (first.secretGenerated) withNode.server = { ...withNode.server, secret: randomBytes(32).toString('base64url') };
    const config = load(withNode);
    const log: Log = createLogger(config.log.level);
    const chain = { node, evm, solana, ton, solidityLag: config.dev.solidity_lag, blockIntervalMs: config.dev.block_interval_ms };
    const token = newDevToken();
    const server = await startServer(config, log, { claim: DEV_CLAIM, extend: (app, deps) => devRoutes(app, deps, chain, token) });
    const started = node;
    const tokenPath = writeDevToken(Number(new URL(server.url).port), token);
    const startedRates = rates;
    return {
      url: server.url,
      nodeUrl: node.url,
      rates,
      databasePath,
      temporary: temporaryDir !== undefined,
      config,
      node,
      evm,
      solana,
      ton,
      server,
      token,
      tokenPath,
      async stop() {
        await server.stop();
        await started.close();
        await startedEvm.close();
        await startedSolana.close();
        await startedTon.close();
        removeDevToken(tokenPath);
        await startedRates?.close();
        removeTemporary();
      },
    };
  } catch (err) {
    await node?.close();
    await evm?.close();
    await solana?.close();
    await ton?.close();
    await rates?.close();
    removeTemporary();
    throw err;
  }
}

/** What `gatewayd dev` prints at start: where things are and the next commands to type. */
export function devWelcome(dev: RunningDev): string {
  const c = dev.config;
  const secondsToSee = (c.dev.solidity_lag * c.dev.block_interval_ms) / 1000 + c.tron.poll_interval_seconds;
  const evmSecondsToFinal = (c.dev.evm_finality_lag * c.dev.block_interval_ms) / 1000 + 1;
  // The commands as they work against this instance: another port needs --url, or they reach another one.
  const flag = devUrlFlag(dev.url);
  return [
    '',
    'gatewayd dev: tron-devnet, a simulated chain. Test network: no real money.',
    '',
    `  gateway    ${dev.url}   (console ${c.server.public_url}/console)`,
    `  chain      ${dev.nodeUrl}   block every ${c.dev.block_interval_ms} ms, solidified ${c.dev.solidity_lag} blocks later, ~${c.dev.filler_per_block} filler transactions per block`,
    `  USDT       ${c.network.usdtContract} (the devnet's; any other token is ignored)`,
    ...evmLines(dev),
    ...accountLines(dev),
    dev.rates
      ? `  rates      ${dev.rates.url}   simulated CoinGecko, Kraken and Coinbase (e.g. 7.115 CNY per USDT; not market data)`
      : `  rates      ${c.pricing.sources.length} source(s) from [[pricing.sources]]`,
    `  database   ${dev.databasePath}${dev.temporary ? '   (fresh, removed at exit; --database FILE keeps one)' : ''}`,
    `  control    token ${dev.token}   (/_dev/ routes: header X-Gatewayd-Dev-Token, Host a loopback address or localhost;`,
    `             the subcommands below read it from ${dev.tokenPath})`,
    '',
    'Next, in another terminal:',
    `  gatewayd dev merchant create${flag} --email you@example.com < password-file    # prints an API key`,
    `  gatewayd dev pay${flag} INVOICE_ID [--network N] [--amount A] [--late] [--from ADDRESS] [--fake-token] [--failed]`,
    `  gatewayd dev transfer${flag} [--network N] [--token T] --to ADDRESS --amount A [--from ADDRESS] [--fake-token] [--failed]`,
    `A payment is seen about ${secondsToSee} s after it is made on tron-devnet, final about ${evmSecondsToFinal} s after on the EVM devnets,`,
    `about ${(dev.solana.finalityLag * c.dev.block_interval_ms) / 1000 + 1} s after on solana-devnet and ${(2 * c.dev.block_interval_ms) / 1000 + 1} s after on ton-devnet.`,
    'Webhooks may go to http://localhost here (never under serve).',
    '',
  ].join('\n');
}

/** The banner's lines for the simulated EVM devnets: one URL per network, its chain id and tokens. */
function evmLines(dev: RunningDev): string[] {
  const c = dev.config;
  const lag = c.dev.evm_finality_lag;
  const cap = c.dev.evm_max_block_range;
  return [
    `  EVM        ${dev.evm.url}/NETWORK   JSON-RPC; block every ${c.dev.block_interval_ms} ms, finalized ${lag} blocks later (safe ${Math.ceil(lag / 2)}), ` +
      `eth_getLogs ${cap > 0 ? `up to ${cap} blocks` : 'any range'}`,
    ...c.evmNetworks.map(({ network }) => {
      const tokens = network.tokens.map((t) => `${t.symbol} ${t.contract} (${t.decimals})`).join('  ');
      return `    ${network.id.padEnd(16)} chain id ${String(network.chainId).padEnd(7)} ${dev.evm.urlOf(network.id)}   ${tokens}`;
    }),
  ];
}

/** The banner's lines for solana-devnet and ton-devnet: each simulator's URL and token. */
function accountLines(dev: RunningDev): string[] {
  const c = dev.config;
  const tokens = (n: { tokens: readonly { symbol: string; contract: string; decimals: number }[] }) =>
    n.tokens.map((t) => `${t.symbol} ${t.contract} (${t.decimals})`).join('  ');
  return [
    ...c.solanaNetworks.map(
      ({ network }) =>
        `  Solana     ${dev.solana.url}   ${network.id}, JSON-RPC; slot every ${c.dev.block_interval_ms} ms, finalized ${dev.solana.finalityLag} slots later   ${tokens(network)}`,
    ),
    ...c.tonNetworks.map(
      ({ network }) =>
        `  TON        ${dev.ton.url}   ${network.id}, toncenter v3 index; masterchain block every ${c.dev.block_interval_ms} ms, global id ${network.chainId}   ${tokens(network)}`,
    ),
  ];
}
