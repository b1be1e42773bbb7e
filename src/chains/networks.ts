/**
 * The networks gatewayd can watch and the tokens it accepts on each, pinned by contract address and
 * decimals. A token is never found by its symbol: anyone can deploy a contract called "USDT", and
 * only the address below is the token. docs/payments.md, "Networks and tokens", cites the issuers'
 * published lists each address was checked against.
 *
 * Test networks: `{chain}-devnet` are simulated (by `gatewayd dev`), with the decimals of their
 * mainnet twin; their token addresses are derived from a fixed label (the first 20 bytes of
 * keccak256("gatewayd {network} {symbol}"), EIP-55), so they name no real contract, and their chain
 * ids (900000 + the twin's, 942161 for Arbitrum's) are not any public chain's. `ethereum-sepolia` is
 * the public Sepolia testnet with Circle's test USDC.
 */
import { NETWORKS as TRON_NETWORKS } from '../lib/tron.js';
import { canonicalTonAddress } from './ton/address.js';

/** How a family names itself (family.ts says what a family supplies). */
export type FamilyName = 'tron' | 'evm' | 'solana' | 'ton';

/**
 * Which block a network calls final. `tag`: the provider's own finalized (or safe) block, checked for
 * plausibility; `confirmations`: the head minus a count, with the block hash at each height checked.
 */
export type FinalityRule = { kind: 'tag'; tag: 'finalized' | 'safe' } | { kind: 'confirmations'; blocks: number };

export type TokenSymbol = 'USDT' | 'USDC';

export interface Token {
  symbol: TokenSymbol;
  /** The token's own name on that chain, as explorers show it. */
  name: string;
  /** The contract (EIP-55 on EVM, base58check on TRON, the mint's base58 address on Solana, the jetton master's raw `0:hex` on TON); every other contract is ignored. */
  contract: string;
  decimals: 6 | 18;
  /** Who issues it there: Tether, Tether's USDT0 (LayerZero OFT), Circle, Binance (Binance-Peg), or nobody (devnet). */
  issuer: 'tether' | 'usdt0' | 'circle' | 'binance-peg' | 'devnet';
}

export const EVM_NETWORK_IDS = [
  'ethereum-mainnet',
  'bsc-mainnet',
  'polygon-mainnet',
  'arbitrum-mainnet',
  'base-mainnet',
  'ethereum-devnet',
  'bsc-devnet',
  'polygon-devnet',
  'arbitrum-devnet',
  'base-devnet',
  'ethereum-sepolia',
] as const;
export const SOLANA_NETWORK_IDS = ['solana-mainnet', 'solana-devnet'] as const;
// TON: the mainnet and its simulated twin (the public testnet has no Tether USDT; see below).
export const TON_NETWORK_IDS = ['ton-mainnet', 'ton-devnet'] as const;
export const NETWORK_IDS = ['tron-mainnet', 'tron-nile', 'tron-devnet', ...EVM_NETWORK_IDS, ...SOLANA_NETWORK_IDS, ...TON_NETWORK_IDS] as const;
export type NetworkId = (typeof NETWORK_IDS)[number];
export type EvmNetworkId = (typeof EVM_NETWORK_IDS)[number];
export type SolanaNetworkId = (typeof SOLANA_NETWORK_IDS)[number];
export type TonNetworkId = (typeof TON_NETWORK_IDS)[number];

export interface Network {
  id: NetworkId;
  family: FamilyName;
  /**
   * The EVM chain id (`eth_chainId`, EIP-155, the `@chainId` of an EIP-681 link). TRON's JSON-RPC
   * reports one too (the last 4 bytes of its genesis block id); undefined for the TRON devnet. On TON
   * the `global_id` every block header carries (-239 on mainnet), which a provider is checked against.
   */
  chainId: number | undefined;
  /** A test network: its tokens are worth nothing, and every page and mail must say so. */
  test: boolean;
  /** The plain name a payer is shown, the same in every language. */
  label: string;
  /** A test network's mainnet twin, whose decimals it keeps. */
  twin: NetworkId | undefined;
  tokens: readonly Token[];
  /** The default rule for "final"; an operator may choose `safe` or a confirmation count per network. */
  finality: FinalityRule;
  /**
   * The least distance between the latest and the finalized block a sound provider reports. A
   * `finalized` closer to the head than this is not believed (a provider that calls everything final).
   */
  minFinalityLagBlocks: number;
  /**
   * True when a block header's logsBloom covers every log of the block, so the reader may refuse a
   * log the bloom does not hold. False on Polygon PoS, whose state-sync logs (bridge deposits, which
   * mint tokens) are kept out of the header's bloom.
   */
  bloomHasEveryLog: boolean;
  /** About how often a block comes, and how long a transfer takes to become final (for the checkout's "about N minutes"). */
  blockTimeMs: number;
  finalityTimeMs: number;
}

const FINALIZED: FinalityRule = Object.freeze({ kind: 'tag', tag: 'finalized' });
const SECOND = 1000;
const MINUTE = 60 * SECOND;

function token(t: Token): Readonly<Token> {
  return Object.freeze(t);
}

function tron(name: keyof typeof TRON_NETWORKS, chainId: number | undefined, twin: NetworkId | undefined): Network {
  const n = TRON_NETWORKS[name];
  return {
    id: n.id,
    family: 'tron',
    chainId,
    test: n.test,
    label: n.label,
    twin,
    // TRON's USDT is Tether's on mainnet; on Nile the one TRON's tools use; on the devnet a label.
    tokens: [token({ symbol: 'USDT', name: 'Tether USD', contract: n.usdtContract, decimals: 6, issuer: name === 'mainnet' ? 'tether' : 'devnet' })],
    // Solidified blocks (19 of 27 super representatives), which TRON's JSON-RPC calls `finalized`.
    finality: FINALIZED,
    minFinalityLagBlocks: 1,
    bloomHasEveryLog: false,
    blockTimeMs: n.blockIntervalMs,
    finalityTimeMs: name === 'devnet' ? 5 * SECOND : MINUTE,
  };
}

const USDC_NAME = 'USD Coin';

/** An EVM mainnet: `finalized` by default, its tokens, its least finality lag and its times. */
function evmMainnet(
  id: NetworkId,
  chainId: number,
  label: string,
  tokens: Token[],
  times: { minFinalityLagBlocks: number; blockTimeMs: number; finalityTimeMs: number; bloomHasEveryLog?: boolean },
): Network {
  return { id, family: 'evm', chainId, test: false, label, twin: undefined, tokens: tokens.map(token), finality: FINALIZED, bloomHasEveryLog: true, ...times };
}

const MAINNETS: Network[] = [
  evmMainnet(
    'ethereum-mainnet',
    1,
    'Ethereum (ERC20)',
    [
      { symbol: 'USDT', name: 'Tether USD', contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6, issuer: 'tether' },
      { symbol: 'USDC', name: USDC_NAME, contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6, issuer: 'circle' },
    ],
    // A finalized checkpoint is at least one epoch (32 slots) behind the head; two epochs in the normal run.
    { minFinalityLagBlocks: 32, blockTimeMs: 12 * SECOND, finalityTimeMs: 13 * MINUTE },
  ),
  evmMainnet(
    'bsc-mainnet',
    56,
    'BNB Smart Chain (BEP20)',
    [
      // Binance-Peg tokens: issued by Binance against USDT and USDC it holds; 18 decimals, not 6.
      { symbol: 'USDT', name: 'Binance-Peg BSC-USD', contract: '0x55d398326f99059fF775485246999027B3197955', decimals: 18, issuer: 'binance-peg' },
      { symbol: 'USDC', name: 'Binance-Peg USD Coin', contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18, issuer: 'binance-peg' },
    ],
    // Fast finality: a block is finalized once two thirds of the validators attest it, a few blocks on.
    { minFinalityLagBlocks: 1, blockTimeMs: 750, finalityTimeMs: 5 * SECOND },
  ),
  evmMainnet(
    'polygon-mainnet',
    137,
    'Polygon PoS',
    [
      // The PoS bridge's USDT contract, upgraded in place to USDT0 (Tether's OFT) in 2025.
      { symbol: 'USDT', name: 'USDT0', contract: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', decimals: 6, issuer: 'usdt0' },
      // Circle's native USDC, not the bridged USDC.e (0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174).
      { symbol: 'USDC', name: USDC_NAME, contract: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6, issuer: 'circle' },
    ],
    { minFinalityLagBlocks: 1, blockTimeMs: 2 * SECOND, finalityTimeMs: 10 * SECOND, bloomHasEveryLog: false },
  ),
  evmMainnet(
    'arbitrum-mainnet',
    42161,
    'Arbitrum One',
    [
      { symbol: 'USDT', name: 'USDT0', contract: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', decimals: 6, issuer: 'usdt0' },
      // Circle's native USDC, not the bridged USDC.e (0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8).
      { symbol: 'USDC', name: USDC_NAME, contract: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', decimals: 6, issuer: 'circle' },
    ],
    // Final when the batch holding the block is final on Ethereum.
    { minFinalityLagBlocks: 1, blockTimeMs: 250, finalityTimeMs: 20 * MINUTE },
  ),
  evmMainnet(
    'base-mainnet',
    8453,
    'Base',
    // USDC only: Tether issues no USDT on Base (the "USDT" there is a bridged token).
    [{ symbol: 'USDC', name: USDC_NAME, contract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6, issuer: 'circle' }],
    { minFinalityLagBlocks: 1, blockTimeMs: 2 * SECOND, finalityTimeMs: 20 * MINUTE },
  ),
];

/** The devnet token addresses: keccak256("gatewayd {network} {symbol}")[0..20], EIP-55 (a test checks the derivation). */
const DEVNET_CONTRACTS: Record<string, string> = {
  'ethereum-devnet USDT': '0x1a1FA58ca60c50F5Fe509c60351064AE2Ee23cB0',
  'ethereum-devnet USDC': '0x0A084Ab8E9462c675b9C2E81B95822bF60F18297',
  'bsc-devnet USDT': '0xb8FCA85B3491ce2b172E2D7ab045512347397e8B',
  'bsc-devnet USDC': '0xd6382d879E6E535267843C9075Fd72f4d2bC2663',
  'polygon-devnet USDT': '0x5D2EE820CD3a17AA2E135dAcaDd9Ba5D520Fe0Dd',
  'polygon-devnet USDC': '0x133B31c6E96EF29E63B4e19f4d657c1D1a80Be6d',
  'arbitrum-devnet USDT': '0x3b0A766906e107f0c27bef9a5487D0994A5788f7',
  'arbitrum-devnet USDC': '0xFE37a45fA24d5549757A2e6093AF757eaAb34008',
  'base-devnet USDC': '0x87D3d2AEa02B28c5fF102D3937A1933Fd2b82107',
};

/** A simulated twin of a mainnet: same tokens and decimals at label-derived addresses, quick blocks. */
function devnet(twin: Network, chainId: number): Network {
  const id = twin.id.replace('-mainnet', '-devnet') as NetworkId;
  return {
    ...twin,
    id,
    chainId,
    test: true,
    label: `${twin.label} devnet (simulated)`,
    twin: twin.id,
    tokens: twin.tokens.map((t) => token({ ...t, contract: DEVNET_CONTRACTS[`${id} ${t.symbol}`]!, issuer: 'devnet' })),
    minFinalityLagBlocks: 1,
    blockTimeMs: SECOND,
    finalityTimeMs: 10 * SECOND,
  };
}

const DEVNET_CHAIN_IDS: Record<string, number> = {
  'ethereum-mainnet': 900001,
  'bsc-mainnet': 900056,
  'polygon-mainnet': 900137,
  'arbitrum-mainnet': 942161,
  'base-mainnet': 908453,
};

const SEPOLIA: Network = {
  id: 'ethereum-sepolia',
  family: 'evm',
  chainId: 11155111,
  test: true,
  label: 'Ethereum Sepolia testnet',
  twin: 'ethereum-mainnet',
  // Circle's test USDC (its faucet gives it away); Tether publishes no Sepolia USDT.
  tokens: [token({ symbol: 'USDC', name: USDC_NAME, contract: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', decimals: 6, issuer: 'circle' })],
  finality: FINALIZED,
  minFinalityLagBlocks: 32,
  bloomHasEveryLog: true,
  blockTimeMs: 12 * SECOND,
  finalityTimeMs: 13 * MINUTE,
};

/**
 * Solana: the SPL Token mints (owned by the Token program, Tokenkeg…, not Token-2022), 6 decimals.
 * Positions are slots; `finalized` is the slot a supermajority has rooted, about 32 slots (13 s)
 * behind the confirmed one, so one closer than 16 slots is not believed.
 */
const SOLANA_MAINNET: Network = {
  id: 'solana-mainnet',
  family: 'solana',
  chainId: undefined,
  test: false,
  label: 'Solana (SPL)',
  twin: undefined,
  tokens: [
    token({ symbol: 'USDT', name: 'USDT', contract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6, issuer: 'tether' }),
    token({ symbol: 'USDC', name: USDC_NAME, contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6, issuer: 'circle' }),
  ],
  finality: FINALIZED,
  minFinalityLagBlocks: 16,
  bloomHasEveryLog: false,
  blockTimeMs: 400,
  finalityTimeMs: 15 * SECOND,
};

/**
 * The simulated Solana twin: its mints are the base58 of sha256("gatewayd solana-devnet {symbol}"),
 * 32 bytes that name no real mint (a test checks the derivation). It is not Solana's public devnet
 * cluster, whose Circle test USDC (4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU) docs/payments.md names.
 */
const SOLANA_DEVNET: Network = {
  ...SOLANA_MAINNET,
  id: 'solana-devnet',
  test: true,
  label: 'Solana devnet (simulated)',
  twin: 'solana-mainnet',
  tokens: [
    token({ symbol: 'USDT', name: 'USDT', contract: 'GzrQzueLLjruqq3iuaFS3DPt2FaCiteCUng9tbUKCAzQ', decimals: 6, issuer: 'devnet' }),
    token({ symbol: 'USDC', name: USDC_NAME, contract: '3Y93odnoMsoA6Rfa7PtS5ojE7V924GPacnqz5SdfP62e', decimals: 6, issuer: 'devnet' }),
  ],
  minFinalityLagBlocks: 1,
  blockTimeMs: SECOND,
  finalityTimeMs: 10 * SECOND,
};

// ---- TON ----

/**
 * TON: Tether's USDT jetton master (6 decimals), kept in the canonical raw form
 * (EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs printed bounceable). A transfer is final once the
 * transaction is in a shard block that a masterchain block has committed: positions are masterchain
 * sequence numbers, and the provider's latest masterchain block is the final one (no lag). Since
 * April 2026 a masterchain block comes about every 0.4 s; a jetton transfer takes three hops (the
 * payer's wallet, the payer's jetton wallet, the receiver's jetton wallet), a few seconds in all.
 */
const TON_MAINNET: Network = {
  id: 'ton-mainnet',
  family: 'ton',
  chainId: -239,
  test: false,
  label: 'TON',
  twin: undefined,
  tokens: [
    token({
      symbol: 'USDT',
      name: 'Tether USD',
      contract: '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe',
      decimals: 6,
      issuer: 'tether',
    }),
  ],
  finality: FINALIZED,
  minFinalityLagBlocks: 0,
  bloomHasEveryLog: false,
  blockTimeMs: 400,
  finalityTimeMs: 5 * SECOND,
};

/**
 * The simulated TON twin: its USDT master is `0:` + sha256("gatewayd ton-devnet USDT") (a test checks
 * the derivation), so it names no real contract; its global id 900239 is no public network's.
 */
const TON_DEVNET: Network = {
  ...TON_MAINNET,
  id: 'ton-devnet',
  chainId: 900239,
  test: true,
  label: 'TON devnet (simulated)',
  twin: 'ton-mainnet',
  tokens: [
    token({
      symbol: 'USDT',
      name: 'Tether USD',
      contract: '0:718be9295d47ac713b8ab6a3618a91d95704ab751d5484686a560fba76c99d6e',
      decimals: 6,
      issuer: 'devnet',
    }),
  ],
  blockTimeMs: SECOND,
  finalityTimeMs: 5 * SECOND,
};

const ALL: Network[] = [
  tron('mainnet', 0x2b6653dc, undefined),
  tron('nile', 0xcd8690dc, 'tron-mainnet'),
  tron('devnet', undefined, 'tron-mainnet'),
  ...MAINNETS,
  ...MAINNETS.map((n) => devnet(n, DEVNET_CHAIN_IDS[n.id]!)),
  SEPOLIA,
  SOLANA_MAINNET,
  SOLANA_DEVNET,
  TON_MAINNET,
  TON_DEVNET,
];

/** Every network, frozen, by id. */
export const NETWORKS: Readonly<Record<NetworkId, Readonly<Network>>> = Object.freeze(
  Object.fromEntries(ALL.map((n) => [n.id, Object.freeze({ ...n, tokens: Object.freeze([...n.tokens]) })])) as Record<NetworkId, Network>,
);

/** The network an id names, if any. */
export function findNetwork(id: string): Readonly<Network> | undefined {
  return (NETWORKS as Record<string, Readonly<Network>>)[id];
}

/** The token of a network by its symbol (USDT or USDC), if the network has it. */
export function findToken(network: Network, symbol: string): Readonly<Token> | undefined {
  return network.tokens.find((t) => t.symbol === symbol);
}

/**
 * The pinned token at a contract address of a network, if any. EVM addresses compare without case
 * (a provider may answer in lower case); TRON's base58check is case-sensitive and compared exactly;
 * TON addresses compare in their canonical raw form, whatever form and case they were given in.
 */
export function tokenByContract(network: Network, contract: string): Readonly<Token> | undefined {
  if (network.family === 'evm') return network.tokens.find((t) => t.contract.toLowerCase() === contract.toLowerCase());
  if (network.family === 'ton') {
    const canonical = canonicalTonAddress(contract);
    return canonical === undefined ? undefined : network.tokens.find((t) => t.contract === canonical);
  }
  return network.tokens.find((t) => t.contract === contract);
}
