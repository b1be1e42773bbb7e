/**
 * `gatewayd dev`: the whole gateway on tron-devnet, with the simulated TRON node on loopback as its
 * only provider. Solidification works as on mainnet, scaled down (dev.block_interval_ms,
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
import { NETWORKS } from '../lib/tron.js';
import { createLogger, type Log } from '../lib/log.js';
import { startServer, type RunningServer } from '../serve.js';
import { newDevToken, removeDevToken, writeDevToken } from '../cli/dev-token.js';
import { devRoutes } from './dev.routes.js';
import { startSimulatedTron, type SimulatedTron } from './tron-node.js';
import { startSimulatedRates, type SimulatedRates } from './rate-source.js';
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
  server: RunningServer;
  /** The control token of /_dev/ (printed at start), and the file the subcommands read it from. */
  token: string;
  tokenPath: string;
  stop(): Promise<void>;
}

/** How `gatewayd dev` names its claim on a database, for the refusal line. */
export const DEV_CLAIM = { network: NETWORKS.devnet.id, chosenBy: '`gatewayd dev`' } as const;

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
  const overrides = (apiUrl: string): Record<string, Record<string, unknown>> => ({
    tron: { network: 'devnet', api_url: apiUrl, poll_interval_seconds: 1 },
    database: { path: databasePath },
  });
  let node: SimulatedTron | undefined;
  let rates: SimulatedRates | undefined;
  try {
    // First read: where the node listens and how fast its chain goes (the node's URL is not known yet).
    const first = load(overrides('http://127.0.0.1:1'));
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
    const withNode = overrides(node.url);
    if (first.pricing.sources.length === 0) {
      rates = await startSimulatedRates();
      withNode.pricing = { sources: SOURCE_KINDS.map((kind) => ({ kind, url: rates!.url })) };
    }
    // A stable secret for this process without the "run gatewayd init" warning: sessions end with the process anyway.
    if (first.secretGenerated) withNode.server = { ...withNode.server, secret: randomBytes(32).toString('base64url') };
    const config = load(withNode);
    const log: Log = createLogger(config.log.level);
    const chain = { node, solidityLag: config.dev.solidity_lag, blockIntervalMs: config.dev.block_interval_ms };
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
      server,
      token,
      tokenPath,
      async stop() {
        await server.stop();
        await started.close();
        removeDevToken(tokenPath);
        await startedRates?.close();
        removeTemporary();
      },
    };
  } catch (err) {
    await node?.close();
    await rates?.close();
    removeTemporary();
    throw err;
  }
}

/** What `gatewayd dev` prints at start: where things are and the next commands to type. */
export function devWelcome(dev: RunningDev): string {
  const c = dev.config;
  const secondsToSee = (c.dev.solidity_lag * c.dev.block_interval_ms) / 1000 + c.tron.poll_interval_seconds;
  // The commands as they work against this instance: another port needs --url, or they reach another one.
  const flag = devUrlFlag(dev.url);
  return [
    '',
    'gatewayd dev: tron-devnet, a simulated chain. Test network: no real money.',
    '',
    `  gateway    ${dev.url}   (console ${c.server.public_url}/console)`,
    `  chain      ${dev.nodeUrl}   block every ${c.dev.block_interval_ms} ms, solidified ${c.dev.solidity_lag} blocks later, ~${c.dev.filler_per_block} filler transactions per block`,
    `  USDT       ${c.network.usdtContract} (the devnet's; any other token is ignored)`,
    dev.rates
      ? `  rates      ${dev.rates.url}   simulated CoinGecko, Kraken and Coinbase (e.g. 7.115 CNY per USDT; not market data)`
      : `  rates      ${c.pricing.sources.length} source(s) from [[pricing.sources]]`,
    `  database   ${dev.databasePath}${dev.temporary ? '   (fresh, removed at exit; --database FILE keeps one)' : ''}`,
    `  control    token ${dev.token}   (/_dev/ routes: header X-Gatewayd-Dev-Token, Host a loopback address or localhost;`,
    `             the subcommands below read it from ${dev.tokenPath})`,
    '',
    'Next, in another terminal:',
    `  gatewayd dev merchant create${flag} --email you@example.com < password-file    # prints an API key`,
    `  gatewayd dev pay${flag} INVOICE_ID [--amount A] [--late] [--from ADDRESS] [--fake-token] [--failed]`,
    `  gatewayd dev transfer${flag} --to ADDRESS --amount A [--from ADDRESS] [--fake-token] [--failed]`,
    `A payment is seen about ${secondsToSee} s after it is made. Webhooks may go to http://localhost here (never under serve).`,
    '',
  ].join('\n');
}
