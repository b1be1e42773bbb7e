/** The Solana family: owner addresses (ATAs derived per mint), 6-decimal scale, finalized commitment, Solana Pay links. */
import type { ChainFamily } from '../family.js';
import { tokenScale } from '../scale.js';
import { solanaAddressCodec } from './address.js';
import { solanaPaymentLinks } from './payment-link.js';

export const solanaFamily: ChainFamily = {
  name: 'solana',
  codec: solanaAddressCodec,
  scale: tokenScale,
  defaultFinality: (network) => network.finality,
  links: solanaPaymentLinks,
};
