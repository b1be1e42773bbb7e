/**
 * Matching by reference: where a payment carries what the payer's wallet put there to name the
 * invoice option (a TON comment, Solana Pay reference keys; src/chains/payment-reference.ts), the
 * candidates of its exact amount whose option it names come first. A reference chooses among
 * invoices of the amount; it never makes one of another amount match.
 */
import { findNetwork, type NetworkId } from '../chains/networks.js';
import { optionReference } from '../chains/payment-reference.js';

interface Referable {
  invoice: { id: string };
  /** The option paid through (undefined: the invoice's own row, option 0). */
  option: { position: number } | undefined;
}

/** The candidates whose option `references` names first (in their order), then the rest. */
export function preferReferenced<C extends Referable>(candidates: C[], network: NetworkId, references: readonly string[] | undefined): C[] {
  const family = findNetwork(network)?.family;
  if (!family || !references || references.length === 0 || candidates.length < 2) return candidates;
  const named = candidates.filter((c) => {
    const ref = optionReference({ family }, c.invoice.id, c.option?.position ?? 0);
    return ref !== undefined && references.includes(ref);
  });
  return [...named, ...candidates.filter((c) => !named.includes(c))];
}
