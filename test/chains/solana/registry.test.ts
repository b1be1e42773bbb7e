/**
 * The Solana networks of the registry: mainnet's USDT and USDC mints as Tether and Circle publish them
 * (docs/payments.md, "Networks and tokens"), and the simulated devnet twin with the same tokens and
 * decimals at mints derived from a label, which name no real mint.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { encodeBase58 } from '../../../src/lib/base58.js';
import { findNetwork, findToken, NETWORKS, NETWORK_IDS, SOLANA_NETWORK_IDS, tokenByContract } from '../../../src/chains/networks.js';
import { SOLANA_GENESIS_HASHES } from '../../../src/chains/solana/reader.js';
import { solanaFamily } from '../../../src/chains/solana/family.js';

test('solana-mainnet pins the Tether USDT and Circle USDC mints, 6 decimals, at finalized commitment', () => {
  const n = findNetwork('solana-mainnet')!;
  assert.equal(n.family, 'solana');
  assert.equal(n.test, false);
  assert.equal(n.chainId, undefined);
  assert.deepEqual(
    n.tokens.map((t) => [t.symbol, t.contract, t.decimals, t.issuer]),
    [
      ['USDT', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', 6, 'tether'],
      ['USDC', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 6, 'circle'],
    ],
  );
  assert.deepEqual(n.finality, { kind: 'tag', tag: 'finalized' });
  assert.equal(tokenByContract(n, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')?.symbol, 'USDC');
  assert.equal(tokenByContract(n, 'epjfwdd5aufqssqem2qn1xzybapc8g4wegGkZwyTDt1v'), undefined, 'base58 is case-sensitive');
  assert.deepEqual([...SOLANA_NETWORK_IDS], ['solana-mainnet', 'solana-devnet']);
  for (const id of SOLANA_NETWORK_IDS) assert.ok((NETWORK_IDS as readonly string[]).includes(id));
  assert.equal(SOLANA_GENESIS_HASHES['solana-mainnet'], '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
  assert.equal(solanaFamily.name, 'solana');
  assert.deepEqual(solanaFamily.defaultFinality(n), n.finality);
});

test('solana-devnet is a simulated twin: the same tokens and decimals at sha256-derived mints, and a genesis of its own', () => {
  const devnet = NETWORKS['solana-devnet'];
  const twin = NETWORKS['solana-mainnet'];
  assert.equal(devnet.test, true);
  assert.equal(devnet.twin, 'solana-mainnet');
  assert.match(devnet.label, /simulated/);
  const label = (text: string) => encodeBase58(createHash('sha256').update(text).digest());
  for (const t of devnet.tokens) {
    assert.equal(t.contract, label(`gatewayd solana-devnet ${t.symbol}`), t.symbol);
    assert.equal(t.decimals, findToken(twin, t.symbol)!.decimals);
    assert.equal(t.issuer, 'devnet');
  }
  assert.equal(SOLANA_GENESIS_HASHES['solana-devnet'], label('gatewayd solana-devnet genesis'));
});
