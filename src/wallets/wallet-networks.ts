/**
 * Which networks a wallet receives on (docs/payments.md, "Wallets on several networks"): only
 * networks this instance enabled, only of the address's family, each once. Every check runs before
 * anything is written, and every refusal is a 400 validation_error naming the field at fault.
 */
import { ADDRESS_NAMES, addressFamily, parseAddress } from '../chains/address-codec.js';
import type { FamilyName, Network, NetworkId } from '../chains/networks.js';
import type { Config } from '../config.js';
import { AppError, type ErrorDetail } from '../lib/errors.js';

function refuse(details: ErrorDetail[]): never {
  throw new AppError('validation_error', details.length === 1 ? `The request is not valid: ${details[0]!.message}` : 'The request is not valid', details);
}

function named(family: FamilyName | undefined): string {
  return family ? ADDRESS_NAMES[family] : 'this address';
}

function enabledList(config: Pick<Config, 'networks'>): string {
  return config.networks.map((n) => n.id).join(', ');
}

/**
 * The requested networks, each enabled here and of `address`'s family; a refusal names each one at
 * fault (`networks.1`). A network of another family is named as the address's family cannot use it.
 */
export function checkWalletNetworks(config: Pick<Config, 'networks'>, address: string, requested: readonly NetworkId[]): Readonly<Network>[] {
  const family = addressFamily(address);
  const details: ErrorDetail[] = [];
  const networks: Readonly<Network>[] = [];
  requested.forEach((id, i) => {
    const network = config.networks.find((n) => n.id === id);
    if (!network) details.push({ path: `networks.${i}`, message: `${id} is not enabled on this instance; it receives on ${enabledList(config)}` });
    else if (network.family !== family) details.push({ path: `networks.${i}`, message: `${named(family)} cannot receive on ${id}` });
    else networks.push(network);
  });
  if (details.length > 0) refuse(details);
  return networks;
}

/**
 * A new wallet's address in its family's canonical form (EIP-55 on the EVM chains, raw on TON) and its networks:
 * those requested, or by default every network this instance enabled for the address's family (the
 * TRON network for a TRON address, every EVM network for an EVM one).
 */
export function newWalletNetworks(
  config: Pick<Config, 'networks'>,
  address: string,
  requested: readonly NetworkId[] | undefined,
): { address: string; networks: NetworkId[] } {
  const family = addressFamily(address);
  const networks = requested ? checkWalletNetworks(config, address, requested) : config.networks.filter((n) => n.family === family);
  if (networks.length === 0) {
    refuse([
      {
        path: 'address',
        message: `${named(family)} cannot receive on this instance, which receives on ${enabledList(config)}`,
      },
    ]);
  }
  // The networks of one family parse an address alike but for TON's testnet flag, which only a test
  // network takes: every network must take it, and the first one's canonical form is stored.
  let canonical: string | undefined;
  for (const network of networks) {
    const parsed = parseAddress(network, address);
    if (!parsed.ok) refuse([{ path: 'address', message: networks.length > 1 ? `${parsed.error} (on ${network.id})` : parsed.error }]);
    canonical ??= parsed.address;
  }
  return { address: canonical!, networks: networks.map((n) => n.id) };
}
