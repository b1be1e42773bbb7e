/**
 * Plain-HTTP client for the three TRON endpoints the watcher uses (docs/payments.md, Chain watcher):
 * the TronGrid v1 account TRC20 history, the solidity node's transaction receipt and its head block.
 * tronweb is not used: it costs ~380 ms to load, has no method for the history endpoint and wraps
 * errors in axios objects; fetch with AbortSignal.timeout gives the same requests with less code.
 *
 * Every answer is untrusted input: it is parsed with zod, and anything unexpected (an HTTP error,
 * a 200 carrying {"Error": ...}, malformed JSON, a wrong shape, a timeout) becomes a TronApiError
 * whose `kind` the watcher uses to back off and to log each condition once.
 */
import { z } from 'zod';
import { USDT_CONTRACT } from '../lib/tron.js';

export type TronFaultKind = 'timeout' | 'network' | 'rate_limited' | 'auth' | 'server' | 'bad_response';

export class TronApiError extends Error {
  constructor(
    readonly kind: TronFaultKind,
    readonly endpoint: string,
    message: string,
    /** How long the provider asked us to wait (429 Retry-After or "suspended for N s"), in ms. */
    readonly retryAfterMs?: number,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TronApiError';
  }
}

const trc20RecordSchema = z.object({
  transaction_id: z.string(),
  token_info: z.object({ address: z.string() }).loose(),
  block_timestamp: z.number().int(),
  from: z.string(),
  to: z.string(),
  type: z.string(),
  value: z.string(),
}).loose();

export type Trc20Record = z.infer<typeof trc20RecordSchema>;

const trc20PageSchema = z.object({
  success: z.literal(true),
  data: z.array(trc20RecordSchema),
  meta: z.object({ at: z.number().optional(), fingerprint: z.string().min(1).optional() }).loose(),
}).loose();

const logSchema = z.object({
  address: z.string(),
  topics: z.array(z.string()),
  data: z.string().optional(),
}).loose();

/** A solidified receipt; `{}` (not found / not solidified yet) parses to `undefined` before this. */
const receiptSchema = z.object({
  id: z.string(),
  blockNumber: z.number().int(),
  blockTimeStamp: z.number().int(),
  receipt: z.object({ result: z.string().optional() }).loose().optional(),
  result: z.string().optional(),
  log: z.array(logSchema).optional(),
}).loose();

export type Receipt = z.infer<typeof receiptSchema>;
export type ReceiptLog = z.infer<typeof logSchema>;

const nowBlockSchema = z.object({
  block_header: z.object({
    raw_data: z.object({ number: z.number().int(), timestamp: z.number().int() }).loose(),
  }).loose(),
}).loose();

const eventsPageSchema = z.object({
  success: z.literal(true),
  data: z.array(z.object({ block_timestamp: z.number().int() }).loose()),
}).loose();

export interface SolidHead {
  number: number;
  timestamp: number;
}

export interface Trc20Page {
  records: Trc20Record[];
  fingerprint: string | undefined;
}

export interface TronClientOptions {
  apiUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Requests started per second at most; 0 = unpaced (loopback tests and benchmarks). */
  maxRequestsPerSecond: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * TronGrid allows about 15 requests per second per key and answers a burst above it with a ~30 s
 * blackout (TronGrid allows about 15 requests a second per key): pacing a little below it is faster than backing off.
 */
export const DEFAULT_MAX_RPS = 12;
/** TronGrid's largest page. */
export const PAGE_LIMIT = 200;

export class TronClient {
  private readonly base: string;
  private nextSlot = 0;

  constructor(private readonly options: TronClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
  }

  /**
   * Waits for the next request slot. Wall-clock time on purpose (not the injected clock): the
   * provider's limit runs in real time and the wait is a real timer.
   */
  private async pace(): Promise<void> {
    if (this.options.maxRequestsPerSecond <= 0) return;
    const now = Date.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + 1000 / this.options.maxRequestsPerSecond;
    if (slot > now) await new Promise((resolve) => setTimeout(resolve, slot - now));
  }

  /**
   * One page of confirmed incoming USDT records of `address` from `minTimestamp` (inclusive),
   * oldest first. The next page is asked with the same parameters plus the fingerprint; the
   * provider's `links.next` is never followed (it names api.trongrid.io, without our key).
   */
  async trc20Page(address: string, minTimestamp: number, fingerprint?: string): Promise<Trc20Page> {
    const params = new URLSearchParams({
      only_confirmed: 'true',
      only_to: 'true',
      contract_address: USDT_CONTRACT,
      min_timestamp: String(minTimestamp),
      order_by: 'block_timestamp,asc',
      limit: String(PAGE_LIMIT),
    });
    if (fingerprint !== undefined) params.set('fingerprint', fingerprint);
    const url = `${this.base}/v1/accounts/${encodeURIComponent(address)}/transactions/trc20?${params}`;
    const body = await this.request('trc20', url, { method: 'GET' });
    const parsed = trc20PageSchema.safeParse(body);
    if (!parsed.success) throw new TronApiError('bad_response', 'trc20', 'unexpected TRC20 history shape');
    return { records: parsed.data.data, fingerprint: parsed.data.meta.fingerprint };
  }

  /** The solidified receipt of a transaction, or undefined while it is not solidified (`{}`). */
  async solidReceipt(txId: string): Promise<Receipt | undefined> {
    const body = await this.request('receipt', `${this.base}/walletsolidity/gettransactioninfobyid`, {
      method: 'POST',
      body: JSON.stringify({ value: txId }),
    });
    if (isEmptyObject(body)) return undefined;
    const parsed = receiptSchema.safeParse(body);
    if (!parsed.success) throw new TronApiError('bad_response', 'receipt', 'unexpected receipt shape');
    return parsed.data;
  }

  /** The solidified head block: every block at or below it is irreversible. */
  async solidHead(): Promise<SolidHead> {
    const body = await this.request('nowblock', `${this.base}/walletsolidity/getnowblock`, { method: 'GET' });
    const parsed = nowBlockSchema.safeParse(body);
    if (!parsed.success) throw new TronApiError('bad_response', 'nowblock', 'unexpected solid head block shape');
    const raw = parsed.data.block_header.raw_data;
    return { number: raw.number, timestamp: raw.timestamp };
  }

  /**
   * How far TronGrid's confirmed event index has got: the block time of the newest confirmed
   * USDT Transfer it lists. USDT moves in practically every block, so this tracks the indexer
   * behind the account history, which may trail the solidity node.
   */
  async indexedUpTo(): Promise<number> {
    const params = new URLSearchParams({ event_name: 'Transfer', only_confirmed: 'true', order_by: 'block_timestamp,desc', limit: '1' });
    const body = await this.request('events', `${this.base}/v1/contracts/${USDT_CONTRACT}/events?${params}`, { method: 'GET' });
    const parsed = eventsPageSchema.safeParse(body);
    if (!parsed.success || parsed.data.data.length === 0) throw new TronApiError('bad_response', 'events', 'no confirmed USDT event listed');
    return parsed.data.data[0]!.block_timestamp;
  }

  private async request(endpoint: string, url: string, init: { method: string; body?: string }): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers['TRON-PRO-API-KEY'] = this.options.apiKey;
    await this.pace();
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { ...init, headers, redirect: 'error', signal: AbortSignal.timeout(this.options.timeoutMs) });
      text = await readCapped(res, endpoint);
    } catch (err) {
      if (err instanceof TronApiError) throw err;
      const name = err instanceof Error ? err.name : '';
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new TronApiError('timeout', endpoint, `no answer within ${this.options.timeoutMs} ms`);
      }
      throw new TronApiError('network', endpoint, `request failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    let body: unknown;
    let parsedOk = true;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsedOk = false;
    }
    const providerError = errorText(body);
    if (!res.ok) {
      const status = res.status;
      const wait = retryAfterMs(res.headers.get('retry-after'), providerError);
      // TronGrid answers a breached rate limit with 429, or with 403 plus "suspended for N s".
      if (status === 429 || (status === 403 && wait !== undefined)) {
        throw new TronApiError('rate_limited', endpoint, `rate limited (HTTP ${status})`, wait, status);
      }
      if (status === 401 || status === 403) {
        throw new TronApiError('auth', endpoint, `API key refused (HTTP ${status}${providerError ? `: ${truncate(providerError)}` : ''})`, undefined, status);
      }
      if (status >= 500) throw new TronApiError('server', endpoint, `provider error (HTTP ${status})`, wait, status);
      throw new TronApiError('bad_response', endpoint, `HTTP ${status}${providerError ? `: ${truncate(providerError)}` : ''}`, undefined, status);
    }
    if (!parsedOk || body === undefined) throw new TronApiError('bad_response', endpoint, 'malformed JSON body');
    // java-tron reports most failures as HTTP 200 with {"Error": "..."}.
    if (providerError !== undefined) throw new TronApiError('bad_response', endpoint, `provider error: ${truncate(providerError)}`);
    return body;
  }
}

/** A full page of 200 records is about 100 KB; anything far larger is not an answer we want to hold. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

async function readCapped(res: Response, endpoint: string): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    // Leaving the loop early cancels the stream (and so the download).
    if (size > MAX_BODY_BYTES) throw new TronApiError('bad_response', endpoint, `answer larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** The provider's error text, whichever casing it used (`Error` or `error`). */
function errorText(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const value = record.Error ?? record.error;
  return typeof value === 'string' ? value : undefined;
}

/** Retry-After (seconds) or the body's "suspended for 27 s", whichever is given. */
export function retryAfterMs(header: string | null, message: string | undefined): number | undefined {
  if (header && /^\d{1,6}$/.test(header.trim())) return Number(header.trim()) * 1000;
  const m = message ? /suspended for (\d{1,6})\s*s/i.exec(message) : null;
  return m ? Number(m[1]) * 1000 : undefined;
}

function truncate(text: string): string {
  return text.length > 160 ? `${text.slice(0, 160)}...` : text;
}
