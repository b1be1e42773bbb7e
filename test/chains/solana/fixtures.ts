/** Recorded getTransaction answers (test/fixtures/solana/, each with its source) and networks to read them with. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NETWORKS, type Network, type Token } from '../../../src/chains/networks.js';
import type { WatchedAccount } from '../../../src/chains/solana/transaction.js';

const FIXTURES = resolve(import.meta.dirname, '../../../../test/fixtures/solana');

export function recorded(name: string): Record<string, any> {
  return JSON.parse(readFileSync(resolve(FIXTURES, `${name}.json`), 'utf8'));
}

/** A Solana network pinning other mints (Solana's public devnet USDC, or a fixture's own token), for reading recorded answers. */
export function networkWith(tokens: Array<Pick<Token, 'symbol' | 'contract'>>, base: Readonly<Network> = NETWORKS['solana-devnet']): Readonly<Network> {
  return { ...base, tokens: tokens.map((t) => ({ name: t.symbol, decimals: 6, issuer: 'devnet', ...t })) };
}

export function watch(network: Readonly<Network>, account: string, owner: string, symbol = network.tokens[0]!.symbol): Map<string, WatchedAccount> {
  return new Map([[account, { account, owner, token: network.tokens.find((t) => t.symbol === symbol)! }]]);
}
