/** The EVM family: one codec (EIP-55), one scale, one finality default and one link for every EVM network. */
import type { ChainFamily } from '../family.js';
import { tokenScale } from '../scale.js';
import { evmAddressCodec } from './address.js';
import { evmPaymentLinks } from './payment-link.js';

export const evmFamily: ChainFamily = {
  name: 'evm',
  codec: evmAddressCodec,
  scale: tokenScale,
  defaultFinality: (network) => network.finality,
  links: evmPaymentLinks,
};
