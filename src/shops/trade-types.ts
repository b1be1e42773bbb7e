/**
 * The trade types shops send (BEpusdt's `trade_type` on the Epusdt protocol, and the Epay `type`
 * where it names one), mapped to a network and token of this instance. A trade type names a
 * mainnet; on a test instance it means that mainnet's enabled twin (its simulated devnet, or
 * Sepolia for Ethereum, solana-devnet and ton-devnet). One the instance cannot take is refused with
 * the ones it can.
 */
import { findNetwork, findToken, type Network, type NetworkId, type TokenSymbol } from '../chains/networks.js';

/** Every trade type gatewayd knows, with the mainnet and token it names. */
const TRADE_TYPES: Readonly<Record<string, { mainnet: NetworkId; token: TokenSymbol }>> = Object.freeze({
  'usdt.trc20': { mainnet: 'tron-mainnet', token: 'USDT' },
  usdt_trc20: { mainnet: 'tron-mainnet', token: 'USDT' },
  usdt: { mainnet: 'tron-mainnet', token: 'USDT' },
  'usdt.erc20': { mainnet: 'ethereum-mainnet', token: 'USDT' },
  'usdc.erc20': { mainnet: 'ethereum-mainnet', token: 'USDC' },
  'usdt.bep20': { mainnet: 'bsc-mainnet', token: 'USDT' },
  'usdc.bep20': { mainnet: 'bsc-mainnet', token: 'USDC' },
  'usdt.polygon': { mainnet: 'polygon-mainnet', token: 'USDT' },
  'usdc.polygon': { mainnet: 'polygon-mainnet', token: 'USDC' },
  'usdt.arbitrum': { mainnet: 'arbitrum-mainnet', token: 'USDT' },
  'usdc.arbitrum': { mainnet: 'arbitrum-mainnet', token: 'USDC' },
  'usdc.base': { mainnet: 'base-mainnet', token: 'USDC' },
  // BEpusdt's names for Solana's SPL tokens and TON's USDT jetton.
  'usdt.solana': { mainnet: 'solana-mainnet', token: 'USDT' },
  'usdc.solana': { mainnet: 'solana-mainnet', token: 'USDC' },
  'usdt.ton': { mainnet: 'ton-mainnet', token: 'USDT' },
});

export type TradeTypeChoice = { ok: true; network: NetworkId; token: TokenSymbol } | { ok: false; error: string };

/** The enabled network a trade type's mainnet stands for here: itself, or its enabled test twin. */
function standIn(mainnet: NetworkId, enabled: readonly Readonly<Network>[]): Readonly<Network> | undefined {
  return enabled.find((n) => n.id === mainnet) ?? enabled.find((n) => n.test && n.twin === mainnet);
}

/** The trade types this instance takes, for a refusal's message. */
export function acceptedTradeTypes(enabled: readonly Readonly<Network>[]): string[] {
  return Object.entries(TRADE_TYPES)
    .filter(([name, t]) => name.includes('.') && standIn(t.mainnet, enabled) !== undefined && findToken(standIn(t.mainnet, enabled)!, t.token))
    .map(([name]) => name);
}

/** True when `name` (any letter case) is a trade type gatewayd knows. */
export function isTradeType(name: string): boolean {
  return Object.hasOwn(TRADE_TYPES, name.toLowerCase());
}

/** A shop's trade type (any letter case) as a network and token of this instance, or why not. */
export function resolveTradeType(tradeType: string, enabled: readonly Readonly<Network>[]): TradeTypeChoice {
  const known = TRADE_TYPES[tradeType.toLowerCase()];
  const refuse = (why: string): TradeTypeChoice => ({
    ok: false,
    error: `trade_type ${tradeType} ${why}; this gateway takes ${acceptedTradeTypes(enabled).join(', ')}`,
  });
  if (!known) return refuse('is not one gatewayd knows');
  const network = standIn(known.mainnet, enabled);
  if (!network) return refuse(`needs ${findNetwork(known.mainnet)!.label}, which this gateway does not watch`);
  if (!findToken(network, known.token)) return refuse(`needs ${known.token} on ${network.label}, which this gateway does not take`);
  return { ok: true, network: network.id, token: known.token };
}
