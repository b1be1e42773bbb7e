/** The TON family: its address codec (raw `0:hex` stored), scale, finality default and jetton transfer link. */
import type { AddressCodec, ChainFamily } from '../family.js';
import { tokenScale } from '../scale.js';
import { isCanonicalTonAddress, parseTonAddress } from './address.js';
import { tonPaymentLinks } from './payment-link.js';

/**
 * The mainnet codec: every form accepted, testnet-flagged ones refused, raw lower case stored (here
 * rather than in address.ts, which the network registry imports and which so needs no family types).
 */
export const tonAddressCodec: AddressCodec = {
  parse(text) {
    const parsed = parseTonAddress(text);
    return parsed.ok ? { ok: true, address: parsed.address } : parsed;
  },
  isCanonical: isCanonicalTonAddress,
};

export const tonFamily: ChainFamily = {
  name: 'ton',
  codec: tonAddressCodec,
  scale: tokenScale,
  defaultFinality: (network) => network.finality,
  links: tonPaymentLinks,
};
