/**
 * Plain-HTTP client for the java-tron endpoints the block scanner uses, served alike by TronGrid
 * and by an operator's own node: the solidified head (a light header read), the transaction infos
 * of one solidified block, its transaction count (the second provider's light check), and
 * (rarely) a whole block to prove it empty. tronweb is not used: it costs ~380 ms to load and wraps errors in axios
 * objects. Requests go through node:http(s), not fetch: fetch loads Node's bundled undici (about
 * 2.6 MB of heap and its compiled code, for the life of the process) and the watcher is what
 * would load it in an idle gateway (issue 32, footprint). Redirects are refused, answers are capped
 * at MAX_BODY_BYTES (after gzip decoding), and one deadline covers the whole exchange.
 *
 * Every answer is untrusted input: it is parsed with zod, and anything unexpected (an HTTP error,
 * a 200 carrying {"Error": ...}, malformed JSON, a wrong shape, a timeout) becomes a TronApiError
 * whose `kind` the watcher uses to back off and to log each condition once.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createGunzip } from 'node:zlib';
import { z } from 'zod';

export type TronFaultKind = 'timeout' | 'network' | 'rate_limited' | 'auth' | 'server' | 'bad_response';

export class TronApiError extends Error {
  constructor(
    readonly kind: TronFaultKind,
    readonly endpoint: string,
    message: string,
    /** How long the provider asked us to wait (429 Retry-After or "suspended for N s"), in ms. */
    readonly retryAfterMs?: number,
    readonly status?: number,
    /** A well-formed answer the watcher refused: a head that is not credible, or a malformed read. */
    readonly refusal?: 'head' | 'malformed',
  ) {
    super(message);
    this.name = 'TronApiError';
  }
}

/**
 * A block number or time: java-tron sends integers, some proxies (and `visible=true` gateways)
 * decimal strings. Anything else, or a value outside the safe integer range, is a malformed answer.
 */
const intField = z
  .union([
    z.number().int(),
    z
      .string()
      .regex(/^-?\d{1,16}$/)
      .transform(Number),
  ])
  .pipe(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER));

const logSchema = z
  .object({
    address: z.string(),
    topics: z.array(z.string()),
    data: z.string().optional(),
    /** Set by some indexers on a log of a block that left the chain: such a log never counts. */
    removed: z.boolean().optional(),
  })
  .loose();

/** One TransactionInfo of a block (java-tron's shape; fields not read here are kept but unchecked). */
const txInfoSchema = z
  .object({
    id: z.string(),
    blockNumber: intField,
    blockTimeStamp: intField,
    receipt: z.object({ result: z.string().optional() }).loose().optional(),
    result: z.string().optional(),
    log: z.array(logSchema).optional(),
  })
  .loose();

export type TxInfo = z.infer<typeof txInfoSchema>;
export type TxLog = z.infer<typeof logSchema>;

const blockInfosSchema = z.array(txInfoSchema);

/** A block as getnowblock / getblock / getblockbynum serve it: its header, and its transactions' ids when asked for. */
const blockSchema = z
  .object({
    block_header: z
      .object({
        raw_data: z.object({ number: intField, timestamp: intField, txTrieRoot: z.string().optional() }).loose(),
      })
      .loose(),
    transactions: z.array(z.object({ txID: z.string() }).loose()).optional(),
  })
  .loose();

export interface BlockRef {
  number: number;
  timestamp: number;
}

/** A block's header and, when the whole block was read, its transaction ids. */
export interface BlockHeader extends BlockRef {
  /** The transaction ids (a whole block), or undefined (a header only). */
  txIds: string[] | undefined;
  /** The header's Merkle root is java-tron's root of no transactions. */
  emptyRoot: boolean;
}

export interface TronClientOptions {
  apiUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Requests started per second at most; 0 = unpaced (an own node, loopback tests and benchmarks). */
  maxRequestsPerSecond: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * TronGrid allows about 15 requests per second per key and answers a burst above it with a ~30 s
 * blackout: pacing a little below it is faster than backing off.
 */
export const DEFAULT_MAX_RPS = 12;

export class TronClient {
  private readonly base: string;
  private nextSlot = 0;
  /** Whether the light head read (getblock without detail) is served; false after a refusal. */
  private lightHead = true;
  /** Requests made and body bytes received (decoded), for the metrics and the benchmark. */
  readonly stats = { requests: 0, bytes: 0 };

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
   * The solidified head: every block at or below it is irreversible. Read light, with
   * `/walletsolidity/getblock {"detail": false}` (the header only, about 0.6 kB instead of a whole
   * block's ~1,070 B a transaction); a provider that does not serve getblock (an HTTP 404/405 or a
   * java-tron error) is asked `/walletsolidity/getnowblock` from then on.
   */
  async solidHead(): Promise<BlockRef> {
    if (this.lightHead) {
      try {
        const body = await this.request('head', `${this.base}/walletsolidity/getblock`, { method: 'POST', body: JSON.stringify({ detail: false }) });
        return toHeader(body, 'head');
      } catch (err) {
        // Not served: 404/405, or java-tron's 200 {"Error": ...}; any other fault is the provider's fault.
        const unsupported =
          err instanceof TronApiError && err.kind === 'bad_response' && (err.status === 404 || err.status === 405 || err.message.startsWith('provider error:'));
        if (!unsupported) throw err;
        this.lightHead = false;
      }
    }
    const body = await this.request('nowblock', `${this.base}/walletsolidity/getnowblock`, { method: 'GET' });
    return toHeader(body, 'nowblock');
  }

  /**
   * Solidified block `num` in whole (`/walletsolidity/getblockbynum`): its header and transaction
   * ids. Asked only to tell an empty block from a block the provider does not know yet; undefined
   * when the provider does not have it (`{}`).
   */
  async block(num: number): Promise<BlockHeader | undefined> {
    const body = await this.request('block', `${this.base}/walletsolidity/getblockbynum`, { method: 'POST', body: JSON.stringify({ num }) });
    if (typeof body === 'object' && body !== null && Object.keys(body).length === 0) return undefined;
    const header = toHeader(body, 'block');
    if (header.number !== num) throw new TronApiError('bad_response', 'block', `block ${header.number} served for ${num}`);
    return header;
  }

  /**
   * Every TransactionInfo of solidified block `num` (`[]` for a block above the solidified head,
   * or an empty block). Each must name block `num`: an answer about another block is refused.
   */
  async blockInfos(num: number): Promise<TxInfo[]> {
    const body = await this.request('blockinfo', `${this.base}/walletsolidity/gettransactioninfobyblocknum`, {
      method: 'POST',
      body: JSON.stringify({ num }),
    });
    const parsed = blockInfosSchema.safeParse(body);
    if (!parsed.success) throw new TronApiError('bad_response', 'blockinfo', 'unexpected transaction info list shape');
    if (parsed.data.some((i) => i.blockNumber !== num)) throw new TronApiError('bad_response', 'blockinfo', `transaction infos of another block than ${num}`);
    // Every info of a block carries the block's one time, and each transaction is there once.
    if (parsed.data.some((i) => i.blockTimeStamp !== parsed.data[0]!.blockTimeStamp)) {
      throw new TronApiError('bad_response', 'blockinfo', `transaction infos of block ${num} with different block times`);
    }
    if (new Set(parsed.data.map((i) => i.id.toLowerCase())).size !== parsed.data.length) {
      throw new TronApiError('bad_response', 'blockinfo', `a transaction listed twice in block ${num}`);
    }
    return parsed.data;
  }

  /**
   * The number of transactions in solidified block `num`
   * (`/walletsolidity/gettransactioncountbyblocknum`, about 15 bytes). java-tron answers `{"count": N}`,
   * and `{}` (count 0, omitted as protobuf's default) for an empty block and for a block it does not
   * have: 0 proves nothing by itself.
   */
  async txCount(num: number): Promise<number> {
    const body = await this.request('txcount', `${this.base}/walletsolidity/gettransactioncountbyblocknum`, {
      method: 'POST',
      body: JSON.stringify({ num }),
    });
    const parsed = z.object({ count: intField.optional() }).loose().safeParse(body);
    if (!parsed.success || Array.isArray(body)) throw new TronApiError('bad_response', 'txcount', 'unexpected transaction count shape');
    return parsed.data.count ?? 0;
  }

  /**
   * One solidified transaction's TransactionInfo (`/walletsolidity/gettransactioninfobyid`), or
   * undefined when the provider does not know it as solidified (java-tron answers `{}`).
   */
  async txInfo(id: string): Promise<TxInfo | undefined> {
    const body = await this.request('txinfo', `${this.base}/walletsolidity/gettransactioninfobyid`, { method: 'POST', body: JSON.stringify({ value: id }) });
    if (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return undefined;
    const parsed = txInfoSchema.safeParse(body);
    if (!parsed.success) throw new TronApiError('bad_response', 'txinfo', 'unexpected transaction info shape');
    if (parsed.data.id.toLowerCase() !== id.toLowerCase()) throw new TronApiError('bad_response', 'txinfo', 'transaction info of another transaction');
    return parsed.data;
  }

  /** The latest (unsolidified) blocks startNum..endNum-1 in whole (`/wallet/getblockbylimitnext`), up to the head; for seen payments only. */
  async latestBlocks(startNum: number, endNum: number): Promise<unknown[]> {
    const body = await this.request('latest', `${this.base}/wallet/getblockbylimitnext`, { method: 'POST', body: JSON.stringify({ startNum, endNum }) });
    const blocks = (body as { block?: unknown }).block ?? [];
    if (!Array.isArray(blocks)) throw new TronApiError('bad_response', 'latest', 'unexpected block list shape');
    return blocks;
  }

  private async request(endpoint: string, url: string, init: { method: string; body?: string }): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers['TRON-PRO-API-KEY'] = this.options.apiKey;
    await this.pace();
    this.stats.requests += 1;
    let res: { status: number; retryAfter: string | null; text: string };
    try {
      res = await exchange(url, init, headers, this.options.timeoutMs, endpoint);
      this.stats.bytes += Buffer.byteLength(res.text);
    } catch (err) {
      if (err instanceof TronApiError) throw err;
      if (err instanceof Error && err.name === 'TimeoutError') {
        throw new TronApiError('timeout', endpoint, `no answer within ${this.options.timeoutMs} ms`);
      }
      throw new TronApiError('network', endpoint, `request failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = res.text;
    let body: unknown;
    let parsedOk = true;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsedOk = false;
    }
    const providerError = errorText(body);
    if (res.status < 200 || res.status > 299) {
      const status = res.status;
      const wait = retryAfterMs(res.retryAfter, providerError);
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

/**
 * A mainnet block's transaction infos are about 447 B a transaction as compact JSON (0.08-0.12 MB
 * for blocks of 170-281 transactions, by our measurement of recorded mainnet answers); a whole block
 * about 1,070 B a transaction. Anything far larger is not an answer we want to hold.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * One request and its whole answer as text. A redirect is an error (a provider's answer comes from
 * where we asked), the body stops at MAX_BODY_BYTES (decoded), and the deadline covers connecting,
 * the headers and the body, as AbortSignal.timeout did around fetch.
 */
function exchange(
  url: string,
  init: { method: string; body?: string },
  headers: Record<string, string>,
  timeoutMs: number,
  endpoint: string,
): Promise<{ status: number; retryAfter: string | null; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const body = init.body === undefined ? undefined : Buffer.from(init.body);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (err: Error | undefined, answer?: { status: number; retryAfter: string | null; text: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const req = send(
      target,
      {
        method: init.method,
        headers: { ...headers, 'accept-encoding': 'gzip', ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.resume();
          finish(new Error(`redirect refused (HTTP ${status})`));
          return;
        }
        const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null;
        const stream = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) finish(new TronApiError('bad_response', endpoint, `answer larger than ${MAX_BODY_BYTES} bytes`));
          else chunks.push(chunk);
        });
        stream.on('end', () => finish(undefined, { status, retryAfter, text: Buffer.concat(chunks).toString('utf8') }));
        stream.on('error', (err: Error) => finish(err));
        res.on('aborted', () => finish(new Error('the answer was cut short')));
      },
    );
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${timeoutMs} ms`);
      err.name = 'TimeoutError';
      finish(err);
    }, timeoutMs);
    timer.unref();
    req.on('error', (err: Error) => finish(err));
    req.end(body);
  });
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

const ZERO_ROOT = /^0{64}$/;

function toHeader(body: unknown, endpoint: string): BlockHeader {
  const parsed = blockSchema.safeParse(body);
  if (!parsed.success) {
    // A head whose number or time is out of range is a refused head, not only a malformed answer.
    const refusal = endpoint === 'block' ? 'malformed' : 'head';
    throw new TronApiError('bad_response', endpoint, `${refusal === 'head' ? 'head refused: ' : ''}unexpected block shape`, undefined, undefined, refusal);
  }
  const raw = parsed.data.block_header.raw_data;
  return {
    number: raw.number,
    timestamp: raw.timestamp,
    txIds: parsed.data.transactions?.map((t) => t.txID.toLowerCase()) ?? (endpoint === 'block' ? [] : undefined),
    emptyRoot: ZERO_ROOT.test(raw.txTrieRoot ?? ''),
  };
}

function truncate(text: string): string {
  return text.length > 160 ? `${text.slice(0, 160)}...` : text;
}
