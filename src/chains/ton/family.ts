/** The TON family: its address codec (raw `0:hex` stored), scale, finality default and jetton transfer link. */
import type { ChainFamily } from '../family.js';
import { tokenScale } from '../scale.js';
import { tonAddressCodec } from './address.js';
import { tonPaymentLinks } from './payment-link.js';

export const tonFamily: ChainFamily = {
  name: 'ton',
  codec: tonAddressCodec,
  scale: tokenScale,
  defaultFinality: (network) => network.finality,
  links: tonPaymentLinks,
};
