/**
 * TRON constants and base58check addresses (the mainnet USDT contract; base58check over the 0x41-prefixed 20-byte address): a mainnet address
 * is base58(0x41 || 20-byte account id || first 4 bytes of SHA256(SHA256(payload))).
 */
import { createHash } from 'node:crypto';
import { decodeBase58, encodeBase58 } from './base58.js';

export const TOKEN = 'USDT';

/** The networks an instance can run on (`tron.network`); one instance, and one database, runs one. */
export const NETWORK_NAMES = ['mainnet', 'nile', 'devnet'] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];
/** How the API names them (`network` of wallets, invoices and events). */
export const NETWORK_IDS = ['tron-mainnet', 'tron-nile', 'tron-devnet'] as const;
export type NetworkId = (typeof NETWORK_IDS)[number];

export interface TronNetwork {
  name: NetworkName;
  id: NetworkId;
  /** A test network: its USDT is worth nothing, and every page and mail says so. */
  test: boolean;
  /** How a payer is told which chain to use (a proper name, the same in every language). */
  label: string;
  /** The USDT TRC20 contract of this network (base58check); every other token is ignored. */
  usdtContract: string;
  usdtDecimals: 6;
  /** The provider used when `tron.api_url` is not set; '' when there is none (devnet: `gatewayd dev` sets it). */
  defaultApiUrl: string;
  /** A block every 3 s on TRON; the devnet's is dev.block_interval_ms. */
  blockIntervalMs: number;
  /**
   * The blockID of block 0, which `doctor` compares with the provider's (`/wallet/getblockbynum`):
   * a provider of another network answers another genesis. Its last 4 bytes are the chain id that
   * TRON's JSON-RPC `eth_chainId` reports (0x2b6653dc on mainnet, 0xcd8690dc on Nile).
   */
  genesisBlockId: string | undefined;
}

/**
 * Mainnet: USDT TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t, 6 decimals.
 * Nile: the USDT TRON's own tools use there, TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf ("Tether USD",
 * USDT, 6 decimals; docs/test-networks.md cites the sources). Other Nile tokens named USDT exist
 * (e.g. TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj): on Nile anyone can deploy one, and they are ignored.
 * Devnet: the simulated chain of `gatewayd dev`; its USDT address is derived from a fixed label
 * (41 + the first 20 bytes of SHA-256("gatewayd devnet USDT")), so it names no real contract.
 */
export const NETWORKS: Readonly<Record<NetworkName, Readonly<TronNetwork>>> = Object.freeze({
  mainnet: Object.freeze({
    name: 'mainnet',
    id: 'tron-mainnet',
    test: false,
    label: 'TRON',
    usdtContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    usdtDecimals: 6,
    defaultApiUrl: 'https://api.trongrid.io',
    blockIntervalMs: 3000,
    genesisBlockId: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  }),
  nile: Object.freeze({
    name: 'nile',
    id: 'tron-nile',
    test: true,
    label: 'TRON Nile testnet',
    usdtContract: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    usdtDecimals: 6,
    defaultApiUrl: 'https://nile.trongrid.io',
    blockIntervalMs: 3000,
    genesisBlockId: '0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc',
  }),
  devnet: Object.freeze({
    name: 'devnet',
    id: 'tron-devnet',
    test: true,
    label: 'TRON devnet (simulated)',
    usdtContract: 'TNU3QwzARN348EKD6iXuYV3q9iAJ8FPLGN',
    usdtDecimals: 6,
    defaultApiUrl: '',
    blockIntervalMs: 1000,
    genesisBlockId: undefined,
  }),
} as const);

/** The network an API id names, if any. */
export function networkById(id: string): Readonly<TronNetwork> | undefined {
  return Object.values(NETWORKS).find((n) => n.id === id);
}

export const TRON_ADDRESS_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** `41` + 40 hex digits for a valid base58check mainnet address, else undefined. */
export function tronAddressToHex(address: string): string | undefined {
  if (!TRON_ADDRESS_RE.test(address)) return undefined;
  const decoded = decodeBase58(address);
  const bytes = decoded && Buffer.from(decoded);
  if (!bytes || bytes.length !== 25 || bytes[0] !== 0x41) return undefined;
  const payload = bytes.subarray(0, 21);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  if (!checksum.equals(bytes.subarray(21))) return undefined;
  return payload.toString('hex');
}

export function isValidTronAddress(address: string): boolean {
  return tronAddressToHex(address) !== undefined;
}

/** Base58check for `41` + 40 hex digits (case-insensitive), else undefined. */
export function hexToTronAddress(hex: string): string | undefined {
  if (!/^41[0-9a-fA-F]{40}$/.test(hex)) return undefined;
  const payload = Buffer.from(hex, 'hex');
  return encodeBase58(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}
