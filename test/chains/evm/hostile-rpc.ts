/**
 * A hostile EVM JSON-RPC provider for tests: a loopback proxy in front of a real node (anvil) that
 * passes every call through and, as the test switches it on, rewrites a call before it goes on
 * (a provider that ignores the filter), rewrites a result (omit, forge, mark removed, change case,
 * lie about heads), refuses a call (a range error), or answers whole HTTP requests with 429 and
 * Retry-After. Batches are taken apart and put back together, so each call is seen alone.
 */
import { serveJsonRpc } from '../loopback-rpc.js';

export interface Call {
  method: string;
  params: any[];
}

export interface Hostility {
  /** Rewrites a call before it is forwarded. */
  request?: (call: Call) => Call;
  /** Answers a call without forwarding it: a JSON-RPC error object, or undefined to forward. */
  refuse?: (call: Call) => { code: number; message: string } | undefined;
  /** Rewrites a forwarded call's result. */
  result?: (call: Call, result: any) => any | Promise<any>;
  /** The next `times` HTTP requests get 429 with this Retry-After header value. */
  rateLimit?: { times: number; retryAfter: string };
}

export interface HostileRpc {
  url: string;
  /** Every call received (after batches are taken apart), with the time it came. */
  readonly calls: Array<Call & { atMs: number }>;
  /** The times HTTP requests came, refused ones included. */
  readonly requestTimes: number[];
  set(h: Hostility): void;
  close(): Promise<void>;
}

export async function startHostileRpc(upstream: string): Promise<HostileRpc> {
  let hostility: Hostility = {};
  const calls: Array<Call & { atMs: number }> = [];
  let upstreamId = 1;
  async function forward(call: Call): Promise<any> {
    const res = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: upstreamId++, method: call.method, params: call.params }),
    });
    return res.json();
  }
  async function answer(raw: any): Promise<any> {
    const asked: Call = { method: raw.method, params: raw.params ?? [] };
    calls.push({ ...asked, atMs: performance.now() });
    const call = hostility.request ? hostility.request(asked) : asked;
    const refusal = hostility.refuse?.(call);
    if (refusal) return { jsonrpc: '2.0', id: raw.id, error: refusal };
    const upstreamAnswer = await forward(call);
    if (upstreamAnswer.error) return { jsonrpc: '2.0', id: raw.id, error: upstreamAnswer.error };
    const result = hostility.result ? await hostility.result(call, upstreamAnswer.result) : upstreamAnswer.result;
    return { jsonrpc: '2.0', id: raw.id, result };
  }
  const loopback = await serveJsonRpc(
    (body) => (Array.isArray(body) ? Promise.all(body.map(answer)) : answer(body)),
    () => hostility.rateLimit,
  );
  return {
    url: loopback.url,
    calls,
    requestTimes: loopback.requestTimes,
    set(h) {
      hostility = h;
    },
    close: loopback.close,
  };
}
