/**
 * The network and token registry: every network's tokens pinned by EIP-55 contract and decimals as
 * the issuers publish them (docs/payments.md, "Networks and tokens"), the devnet twins with their
 * mainnet twin's decimals at label-derived addresses, and lookups that never go by symbol alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evmAddressCodec, keccakHex, toChecksumAddress } from '../../src/chains/evm/address.js';
import { findNetwork, findToken, NETWORKS, NETWORK_IDS, tokenByContract } from '../../src/chains/networks.js';
import { NETWORKS as TRON_NETWORKS } from '../../src/lib/tron.js';
import { createHash } from 'node:crypto';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import { tonAddressCodec } from '../../src/chains/ton/family.js';

const EXPECTED: Record<string, Array<[string, string, number]>> = {
  'ethereum-mainnet': [
    ['USDT', '0xdAC17F958D2ee523a2206206994597C13D831ec7', 6],
    ['USDC', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 6],
  ],
  'bsc-mainnet': [
    ['USDT', '0x55d398326f99059fF775485246999027B3197955', 18],
    ['USDC', '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18],
  ],
  'polygon-mainnet': [
    ['USDT', '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', 6],
    ['USDC', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 6],
  ],
  'arbitrum-mainnet': [
    ['USDT', '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', 6],
    ['USDC', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 6],
  ],
  'base-mainnet': [['USDC', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6]],
  'ethereum-sepolia': [['USDC', '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', 6]],
};

test('each mainnet and Sepolia token is pinned at the issuer-published contract and decimals, in EIP-55 form', () => {
  for (const [id, tokens] of Object.entries(EXPECTED)) {
    const network = findNetwork(id)!;
    assert.equal(network.family, 'evm');
    assert.deepEqual(
      network.tokens.map((t) => [t.symbol, t.contract, t.decimals]),
      tokens,
      id,
    );
    for (const t of network.tokens) assert.ok(evmAddressCodec.isCanonical(t.contract), `${id} ${t.symbol} is EIP-55`);
  }
  assert.deepEqual(
    [1, 56, 137, 42161, 8453, 11155111],
    ['ethereum-mainnet', 'bsc-mainnet', 'polygon-mainnet', 'arbitrum-mainnet', 'base-mainnet', 'ethereum-sepolia'].map((id) => findNetwork(id)!.chainId),
  );
  assert.equal(findToken(NETWORKS['base-mainnet'], 'USDT'), undefined, 'Base has no native USDT');
  assert.equal(NETWORKS['polygon-mainnet'].tokens[0]!.issuer, 'usdt0');
  // Polygon keeps state-sync logs (bridge deposits) out of the header bloom: no bloom check there.
  assert.deepEqual(
    ['ethereum-mainnet', 'bsc-mainnet', 'polygon-mainnet', 'arbitrum-mainnet', 'base-mainnet', 'polygon-devnet'].map((id) => findNetwork(id)!.bloomHasEveryLog),
    [true, true, false, true, true, false],
  );
  assert.equal(NETWORKS['arbitrum-mainnet'].tokens[0]!.issuer, 'usdt0');
});

test('every devnet twin keeps its mainnet twin tokens and decimals, at keccak-derived addresses of no real contract', () => {
  for (const id of NETWORK_IDS.filter((n) => n.endsWith('-devnet') && NETWORKS[n].family === 'evm')) {
    const devnet = NETWORKS[id];
    const twin = NETWORKS[devnet.twin!];
    assert.equal(devnet.test, true);
    assert.equal(twin.test, false);
    assert.deepEqual(
      devnet.tokens.map((t) => [t.symbol, t.decimals]),
      twin.tokens.map((t) => [t.symbol, t.decimals]),
      id,
    );
    for (const t of devnet.tokens) {
      assert.equal(t.contract, toChecksumAddress(`0x${keccakHex(`gatewayd ${id} ${t.symbol}`).slice(0, 40)}`), `${id} ${t.symbol}`);
      assert.notEqual(t.contract, findToken(twin, t.symbol)!.contract);
    }
    assert.notEqual(devnet.chainId, twin.chainId);
  }
  assert.equal(NETWORKS['bsc-devnet'].tokens[0]!.decimals, 18);
  assert.equal(NETWORKS['ethereum-devnet'].tokens[0]!.decimals, 6);
  const chainIds = Object.values(NETWORKS).flatMap((n) => (n.chainId === undefined ? [] : [n.chainId]));
  assert.equal(new Set(chainIds).size, chainIds.length, 'chain ids are unique');
});

test('TRON networks come from the TRON constants unchanged; every network has a finality rule and times', () => {
  assert.equal(NETWORKS['tron-mainnet'].tokens[0]!.contract, TRON_NETWORKS.mainnet.usdtContract);
  assert.equal(NETWORKS['tron-mainnet'].family, 'tron');
  assert.equal(NETWORKS['tron-mainnet'].chainId, 0x2b6653dc);
  for (const n of Object.values(NETWORKS)) {
    assert.deepEqual(n.finality, { kind: 'tag', tag: 'finalized' }, n.id);
    assert.ok(n.blockTimeMs > 0 && n.finalityTimeMs >= n.blockTimeMs, n.id);
    assert.ok(Object.isFrozen(n) && Object.isFrozen(n.tokens), n.id);
  }
});

test('a token is found by its contract (any letter case on EVM), never by a symbol on another contract', () => {
  const eth = NETWORKS['ethereum-mainnet'];
  assert.equal(tokenByContract(eth, '0xdac17f958d2ee523a2206206994597c13d831ec7')?.symbol, 'USDT');
  assert.equal(tokenByContract(eth, '0xDAC17F958D2EE523A2206206994597C13D831EC7')?.symbol, 'USDT');
  assert.equal(tokenByContract(eth, '0x55d398326f99059fF775485246999027B3197955'), undefined, 'BSC USDT is not a token of Ethereum');
  assert.equal(tokenByContract(NETWORKS['tron-mainnet'], 'tr7nhqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), undefined, 'base58 is case-sensitive');
  assert.equal(findNetwork('ethereum'), undefined);
});

test("TON: Tether's USDT jetton master, 6 decimals, kept raw and printing as Tether publishes it; the devnet twin's master derived from a label", () => {
  const ton = NETWORKS['ton-mainnet'];
  assert.equal(ton.family, 'ton');
  assert.equal(ton.chainId, -239, "the mainnet's global_id");
  assert.deepEqual(
    ton.tokens.map((t) => [t.symbol, t.contract, t.decimals, t.issuer]),
    [['USDT', '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe', 6, 'tether']],
  );
  assert.equal(toFriendlyAddress(ton.tokens[0]!.contract, { bounceable: true }), 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs');
  assert.ok(tonAddressCodec.isCanonical(ton.tokens[0]!.contract));
  const dev = NETWORKS['ton-devnet'];
  assert.equal(dev.test, true);
  assert.equal(dev.twin, 'ton-mainnet');
  assert.equal(dev.tokens[0]!.decimals, 6);
  assert.equal(dev.tokens[0]!.contract, `0:${createHash('sha256').update('gatewayd ton-devnet USDT').digest('hex')}`);
  assert.equal(ton.minFinalityLagBlocks, 0, 'the latest committed masterchain block is final');
});

test('a TON token is found by its master in any printed form or letter case, never by another jetton', () => {
  const ton = NETWORKS['ton-mainnet'];
  for (const form of [
    'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs',
    toFriendlyAddress(ton.tokens[0]!.contract, { bounceable: false }),
    '0:B113A994B5024A16719F69139328EB759596C38A25F59028B146FECDC3621DFE',
  ]) {
    assert.equal(tokenByContract(ton, form)?.symbol, 'USDT', form);
  }
  assert.equal(tokenByContract(ton, NETWORKS['ton-devnet'].tokens[0]!.contract), undefined, "the devnet's master is not mainnet USDT");
  assert.equal(tokenByContract(ton, 'eqcxe6mutqjknfgfarotkot1lzbdiix1kcixrv7nw2id_sds'), undefined, 'a friendly form is case-sensitive (its checksum fails)');
});
