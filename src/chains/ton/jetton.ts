/**
 * Jetton wallets and jetton message bodies. A jetton payment moves between jetton wallets, each a
 * contract whose address is the hash of its StateInit: the wallet code the master names, and data
 * naming the owner and the master. So the owner's USDT jetton wallet is computed here, without asking
 * anyone, and a provider's answer is checked against it: a transfer counts only when it arrived at the
 * address derived from (the pinned master, the watched owner), and since that address binds the code,
 * the contract there is USDT's own wallet, which accepts an `internal_transfer` only from USDT's master
 * or another USDT wallet (anything else aborts the transaction).
 *
 * USDT's master (the jetton master of ton-blockchain/stablecoin-contract) stores its wallet code as a
 * library cell: an exotic cell of type 2 holding the code's hash,
 * 8f452d7a4dfd74066b682365177259ed05734435be76b5fd4bd5d8af2b7c3d68, which its `get_jetton_data`
 * answers and its wallets carry; the wallet data is status:uint4 balance:Coins owner:MsgAddress
 * master:MsgAddress, all zero but the addresses at deployment. docs/payments.md ("TON") cites where
 * the hash was read; test/chains/ton/jetton.test.ts checks it against a recorded answer of the
 * master and the derivation against real mainnet pairs of owner and wallet.
 *
 * @ton/core is loaded on first use, so a server that watches no TON network never loads it.
 */
import { canonicalTonAddress } from './address.js';

type TonCore = typeof import('@ton/core');
let loading: Promise<TonCore> | undefined;

/** @ton/core, imported once and only when a TON reader first needs cells. */
export function tonCore(): Promise<TonCore> {
  // Node gives a CommonJS package's exports by name; the bundle's copy of it, only as `default`.
  loading ??= import('@ton/core').then((m) => ('beginCell' in m ? m : (m as unknown as { default: TonCore }).default));
  return loading;
}

/** The hash of USDT's jetton wallet code, as the library cell in USDT's master data names it. */
export const USDT_WALLET_CODE_HASH = '8f452d7a4dfd74066b682365177259ed05734435be76b5fd4bd5d8af2b7c3d68';

export const OP_TRANSFER = 0x0f8a7ea5;
export const OP_INTERNAL_TRANSFER = 0x178d4519;
export const OP_TRANSFER_NOTIFICATION = 0x7362d09c;

/** The owner's jetton wallet (canonical raw form) for a master whose wallet code is a library cell of `codeHash`. */
export async function jettonWalletAddress(master: string, owner: string, codeHash: string = USDT_WALLET_CODE_HASH): Promise<string> {
  const { Address, beginCell, contractAddress } = await tonCore();
  const masterRaw = canonicalTonAddress(master);
  const ownerRaw = canonicalTonAddress(owner);
  if (!masterRaw || !ownerRaw) throw new Error(`not a TON address: ${masterRaw ? owner : master}`);
  const code = beginCell().storeUint(2, 8).storeBuffer(Buffer.from(codeHash, 'hex')).endCell({ exotic: true });
  const data = beginCell().storeUint(0, 4).storeCoins(0).storeAddress(Address.parseRaw(ownerRaw)).storeAddress(Address.parseRaw(masterRaw)).endCell();
  return contractAddress(0, { code, data }).toRawString();
}

/** Derived jetton wallets per owner, for one master, computed once each. */
export class JettonWallets {
  private readonly byOwner = new Map<string, string>();
  private readonly byWallet = new Map<string, string>();

  constructor(
    readonly master: string,
    private readonly codeHash: string = USDT_WALLET_CODE_HASH,
  ) {}

  /** Each owner's wallet (owners in canonical form), deriving the ones not seen before. */
  async walletsOf(owners: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const owner of owners) {
      let wallet = this.byOwner.get(owner);
      if (wallet === undefined) {
        wallet = await jettonWalletAddress(this.master, owner, this.codeHash);
        this.byOwner.set(owner, wallet);
        this.byWallet.set(wallet, owner);
      }
      out.set(owner, wallet);
    }
    return out;
  }

  /** The owner whose derived wallet this is, if it was derived here. */
  ownerOf(wallet: string): string | undefined {
    return this.byWallet.get(wallet);
  }
}

/** An `internal_transfer` body as the receiving jetton wallet got it. */
export interface InternalTransfer {
  queryId: bigint;
  amount: bigint;
  /** The sending owner (canonical), undefined for the none address (a mint). */
  from: string | undefined;
  forwardTonAmount: bigint;
  /** The text comment of the forward payload (op 0 then UTF-8), if it carries one. */
  comment: string | undefined;
}

export type BodyResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** A BOC given as base64 (toncenter) or hex (tonapi), as a cell. */
async function cellOf(boc: string): Promise<import('@ton/core').Cell> {
  const { Cell } = await tonCore();
  const bytes = /^[0-9a-fA-F]+$/.test(boc) && boc.length % 2 === 0 ? Buffer.from(boc, 'hex') : Buffer.from(boc, 'base64');
  const cells = Cell.fromBoc(bytes);
  if (cells.length !== 1) throw new Error('a message body is one root cell');
  return cells[0]!;
}

/**
 * The text comment of a forward payload (Either Cell ^Cell, read from `slice`): op 0 followed by the
 * UTF-8 text (snake cells). A binary comment (0xff first) or any other payload is no text comment.
 */
function forwardComment(slice: import('@ton/core').Slice): string | undefined {
  let payload = slice;
  if (payload.remainingBits >= 1 && payload.loadBit()) {
    if (payload.remainingRefs < 1) return undefined;
    payload = payload.loadRef().beginParse();
  }
  if (payload.remainingBits < 32 || payload.loadUint(32) !== 0) return undefined;
  if (payload.remainingBits >= 8 && payload.preloadUint(8) === 0xff) return undefined;
  return payload.loadStringTail();
}

/** Parses an `internal_transfer` (op 0x178d4519) body; anything else is an error, never a payment. */
export async function parseInternalTransfer(boc: string): Promise<BodyResult<InternalTransfer>> {
  try {
    const s = (await cellOf(boc)).beginParse();
    if (s.remainingBits < 32) return { ok: false, error: 'body too short for an op code' };
    const op = s.loadUint(32);
    if (op !== OP_INTERNAL_TRANSFER) return { ok: false, error: `op 0x${op.toString(16).padStart(8, '0')} is not internal_transfer` };
    const queryId = s.loadUintBig(64);
    const amount = s.loadCoins();
    const fromAddress = s.loadMaybeAddress();
    s.loadAddressAny();
    const forwardTonAmount = s.loadCoins();
    let comment: string | undefined;
    try {
      comment = forwardComment(s);
    } catch {
      comment = undefined;
    }
    return { ok: true, value: { queryId, amount, from: fromAddress ? fromAddress.toRawString() : undefined, forwardTonAmount, comment } };
  } catch (err) {
    return { ok: false, error: `not an internal_transfer body: ${(err as Error).message}` };
  }
}
