/**
 * What a solidified block pays to the watched addresses. Only the TransactionInfo counts: SUCCESS
 * and not FAILED, Transfer logs emitted by the USDT contract itself (compared exactly, in hex with
 * or without the 41 prefix or in base58) and not marked `removed`, with exactly 3 topics, decoded
 * from topics and data (never from calldata, `contractResult`, symbols or names, which senders
 * control), to a watched address.
 */
import { hexToTronAddress, tronAddressToHex } from '../lib/tron.js';
import type { TxInfo } from './tron.client.js';
import { micros, type Micros } from '../lib/amounts.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const TX_ID_RE = /^[0-9a-f]{64}$/;
const ADDRESS_WORD_RE = /^0{24}[0-9a-f]{40}$/;
const DATA_RE = /^[0-9a-f]{64}$/;

export interface VerifiedTransfer {
  txHash: string;
  /** Index of the log in its transaction's `log` array: (txHash, logIndex) is recorded once. */
  logIndex: number;
  from: string;
  to: string;
  /** May be 0 (poisoning): recorded, never matched to an invoice. */
  amount: Micros;
  /** The USDT contract that emitted the log (the network's). */
  tokenContract: string;
  blockNumber: number;
  blockTimestamp: number;
}

export interface Rejection {
  txHash: string;
  to: string;
  reason: string;
}

/** The watched addresses by their 20-byte hex (the form topics carry) -> base58. */
export type WatchedSet = ReadonlyMap<string, string>;

export function watchedSet(addresses: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of addresses) {
    const h = tronAddressToHex(a);
    if (h) out.set(h.slice(2), a);
  }
  return out;
}

/** A log's emitting contract as 20-byte hex: java-tron gives hex without 41, some gateways with it, `visible=true` base58. */
function logAddress(address: string): string {
  if (address.startsWith('T')) return tronAddressToHex(address)?.slice(2) ?? '';
  const a = address.toLowerCase().replace(/^0x/, '');
  return a.length === 42 && a.startsWith('41') ? a.slice(2) : a;
}

/**
 * USDT Transfer logs of one block to a watched address, from successful transactions; and the
 * rejected ones (a failed transaction that still carries such a log), for the logs.
 */
export function transfersInBlock(
  infos: readonly TxInfo[],
  watched: WatchedSet,
  usdtContract: string,
): { transfers: VerifiedTransfer[]; rejected: Rejection[] } {
  // The network's USDT as logs name it: 20-byte hex without the 41 prefix.
  const usdtLogAddress = tronAddressToHex(usdtContract)!.slice(2);
  const transfers: VerifiedTransfer[] = [];
  const rejected: Rejection[] = [];
  for (const info of infos) {
    if (!info.log || info.log.length === 0) continue;
    const txHash = info.id.toLowerCase();
    const candidates: VerifiedTransfer[] = [];
    info.log.forEach((log, index) => {
      if (logAddress(log.address) !== usdtLogAddress) return;
      // A log an indexer marks removed belongs to a block that left the chain.
      if (log.removed === true) return;
      if (log.topics.length !== 3 || log.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return;
      const fromWord = log.topics[1]!.toLowerCase();
      const toWord = log.topics[2]!.toLowerCase();
      const data = (log.data ?? '').toLowerCase();
      if (!ADDRESS_WORD_RE.test(fromWord) || !ADDRESS_WORD_RE.test(toWord) || !DATA_RE.test(data)) return;
      const to = watched.get(toWord.slice(24));
      if (to === undefined) return;
      candidates.push({
        txHash,
        logIndex: index,
        from: hexToTronAddress(`41${fromWord.slice(24)}`)!,
        to,
        amount: micros(BigInt(`0x${data}`)),
        tokenContract: usdtContract,
        blockNumber: info.blockNumber,
        blockTimestamp: info.blockTimeStamp,
      });
    });
    if (candidates.length === 0) continue;
    if (!TX_ID_RE.test(txHash)) {
      for (const c of candidates) rejected.push({ txHash, to: c.to, reason: 'malformed transaction id' });
    } else if (info.receipt?.result !== 'SUCCESS' || info.result === 'FAILED') {
      const reason = `execution ${info.receipt?.result ?? info.result ?? 'without result'}`;
      for (const c of candidates) rejected.push({ txHash, to: c.to, reason });
    } else {
      transfers.push(...candidates);
    }
  }
  return { transfers, rejected };
}

/** A stable text of what a block says about the watched addresses, to compare two reads. */
export function blockDigest(result: { transfers: VerifiedTransfer[]; rejected: Rejection[] }): string {
  return JSON.stringify([
    result.transfers.map((t) => [t.txHash, t.logIndex, t.from, t.to, t.amount.toString(), t.blockTimestamp]),
    result.rejected.map((r) => [r.txHash, r.to, r.reason]),
  ]);
}
