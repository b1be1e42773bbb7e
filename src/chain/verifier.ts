/**
 * The verifier checklist (docs/payments.md, Attacks it defends against). A TronGrid record is only a hint that decides
 * whether a receipt is worth reading; what counts is the solidified receipt: SUCCESS, and Transfer
 * logs emitted by the USDT contract itself, decoded from topics and data (never from calldata,
 * `contractResult`, symbols or names, which senders control).
 */
import { hexToTronAddress, tronAddressToHex, USDT_CONTRACT } from '../lib/tron.js';
import type { Receipt, Trc20Record } from './trongrid.client.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** The USDT contract as receipts name it: 20-byte hex without the 41 prefix. */
export const USDT_LOG_ADDRESS = tronAddressToHex(USDT_CONTRACT)!.slice(2);

const TX_ID_RE = /^[0-9a-f]{64}$/;
const ADDRESS_WORD_RE = /^0{24}[0-9a-f]{40}$/;
const DATA_RE = /^[0-9a-f]{64}$/;
const DECIMAL_RE = /^[0-9]{1,80}$/;

/** Why a record is not worth a receipt read (for debug logs), or undefined when it is. */
export function rejectRecord(record: Trc20Record, watchedAddress: string): string | undefined {
  if (!TX_ID_RE.test(record.transaction_id.toLowerCase())) return 'malformed transaction id';
  if (record.type !== 'Transfer') return `type ${record.type}`;
  // The contract address, compared exactly: symbol and name are chosen by whoever deploys a token.
  if (record.token_info.address !== USDT_CONTRACT) return 'not the USDT contract';
  if (record.to !== watchedAddress) return 'another recipient';
  if (!DECIMAL_RE.test(record.value) || BigInt(record.value) === 0n) return 'zero or malformed value';
  return undefined;
}

export interface VerifiedTransfer {
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  amount: bigint;
  blockNumber: number;
  blockTimestamp: number;
}

export type ReceiptVerdict =
  | { ok: true; transfers: VerifiedTransfer[] }
  /** final: the solidified receipt can never change, so neither can this rejection. */
  | { ok: false; reason: string; final: boolean };

/**
 * The USDT Transfer logs of a solidified receipt that pay `watchedAddress` a positive amount.
 * `solidHeadNumber` is a second finality check: the block must be at or below the solid head.
 */
export function verifyReceipt(receipt: Receipt, txHash: string, watchedAddress: string, solidHeadNumber: number): ReceiptVerdict {
  const tx = txHash.toLowerCase();
  // A provider answering for another transaction may answer correctly next time.
  if (receipt.id.toLowerCase() !== tx) return { ok: false, reason: 'receipt of another transaction', final: false };
  // The head was read before the history: a block solidified since then is simply not judged yet.
  if (receipt.blockNumber > solidHeadNumber) return { ok: false, reason: 'block above the solidified head', final: false };
  if (receipt.receipt?.result !== 'SUCCESS' || receipt.result === 'FAILED') {
    return { ok: false, reason: `execution ${receipt.receipt?.result ?? receipt.result ?? 'without result'}`, final: true };
  }
  const watchedHex = tronAddressToHex(watchedAddress);
  if (!watchedHex) return { ok: false, reason: 'watched address is not a valid TRON address', final: true };
  const transfers: VerifiedTransfer[] = [];
  (receipt.log ?? []).forEach((log, index) => {
    if (log.address.toLowerCase() !== USDT_LOG_ADDRESS) return;
    if (log.topics.length !== 3 || log.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return;
    const fromWord = log.topics[1]!.toLowerCase();
    const toWord = log.topics[2]!.toLowerCase();
    const data = (log.data ?? '').toLowerCase();
    if (!ADDRESS_WORD_RE.test(fromWord) || !ADDRESS_WORD_RE.test(toWord) || !DATA_RE.test(data)) return;
    if (`41${toWord.slice(24)}` !== watchedHex) return;
    const amount = BigInt(`0x${data}`);
    if (amount === 0n) return;
    transfers.push({
      txHash: tx,
      logIndex: index,
      from: hexToTronAddress(`41${fromWord.slice(24)}`)!,
      to: watchedAddress,
      amount,
      blockNumber: receipt.blockNumber,
      blockTimestamp: receipt.blockTimeStamp,
    });
  });
  if (transfers.length === 0) return { ok: false, reason: 'no USDT Transfer log to this address', final: true };
  return { ok: true, transfers };
}
