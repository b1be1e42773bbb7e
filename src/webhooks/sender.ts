/**
 * One HTTPS POST to a checked webhook target (plain HTTP only for the http URLs that `gatewayd dev`
 * alone accepts). The socket goes to the address the URL policy just
 * approved (a custom `lookup` hands it over, so no second DNS query can redirect it), TLS verifies
 * the certificate for the hostname (SNI and Host are the hostname), redirects are never followed,
 * and the whole attempt (connect, TLS, headers) is bounded by one deadline.
 */
import { request as httpRequest } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { ConfigError, type Config } from '../config.js';
import type { CheckedTarget } from './url-policy.js';

export interface AttemptOutcome {
  ok: boolean;
  /** The HTTP status when the receiver answered, else null. */
  responseStatus: number | null;
  /** Why the attempt failed (null on success); never holds the secret or the body. */
  error: string | null;
  /** The receiver's Retry-After header, as sent (absent when it sent none). */
  retryAfter?: string;
}

/**
 * How a request other than a webhook's is sent and judged (the shops' callbacks, src/shops/):
 * the method (GET carries no body), and a judge of the status and the first 16 KiB of the answer
 * that returns null when the receiver acknowledged, else why not. Without a judge any 2xx is
 * success and the answer is not kept.
 */
export interface SendOptions {
  method?: 'GET' | 'POST';
  judge?: (status: number, body: string) => string | null;
}

export interface Sender {
  send(target: CheckedTarget, body: string, headers: Record<string, string>, options?: SendOptions): Promise<AttemptOutcome>;
}

/** The receiver's answer is not used; reading a little of it lets a well-behaved server finish. */
const MAX_RESPONSE_BYTES = 16 * 1024;
/** TLS sessions kept for resumption, at most this many receivers (hostname, checked address, port). */
const MAX_TLS_SESSIONS = 256;

export function createSender(config: Config): Sender {
  const timeoutMs = Math.round(config.webhooks.timeout_seconds * 1000);
  // Built once: parsing the CA bundle on every attempt would cost more than the request itself.
  let secureContext: SecureContext | undefined;
  if (config.webhooks.ca_file) {
    let extra: string;
    try {
      extra = readFileSync(config.webhooks.ca_file, 'utf8');
    } catch (err) {
      throw new ConfigError(`${config.source}: webhooks.ca_file: cannot read ${config.webhooks.ca_file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    // OpenSSL skips certificates it cannot parse; a bundle that trusts nothing must not pass silently.
    const blocks = extra.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    try {
      if (blocks.length === 0) throw new Error('no certificate found');
      for (const block of blocks) new X509Certificate(block);
    } catch (err) {
      throw new ConfigError(`${config.source}: webhooks.ca_file: ${config.webhooks.ca_file} is not a PEM certificate bundle (${(err as Error).message})`);
    }
    secureContext = createSecureContext({ ca: [...rootCertificates, ...blocks] });
  }

  // TLS sessions by receiver: the next attempt to the same hostname at the same checked address
  // resumes the session (no certificate chain to send and verify again) over a connection of its
  // own; a name that now resolves elsewhere gets a full handshake there.
  const sessions = new Map<string, Buffer>();
  const keepSession = (key: string, session: Buffer): void => {
    sessions.delete(key);
    if (sessions.size >= MAX_TLS_SESSIONS) sessions.delete(sessions.keys().next().value!);
    sessions.set(key, session);
  };

  return {
    send(target, body, headers, sendOptions = {}) {
      const method = sendOptions.method ?? 'POST';
      const judge = sendOptions.judge;
      return new Promise<AttemptOutcome>((resolve) => {
        let settled = false;
        const finish = (outcome: AttemptOutcome): void => {
          if (settled) return;
          settled = true;
          resolve(outcome);
        };
        const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
          if (options.all) callback(null, [{ address: target.address, family: target.family }]);
          else callback(null, target.address, target.family);
        };
        const hostHeader = target.port === 443 ? target.hostname : `${target.hostname}:${target.port}`;
        const sessionKey = `${target.hostname}|${target.address}|${target.port}`;
        const options: RequestOptions & { secureContext?: SecureContext; session?: Buffer } = {
          method,
          hostname: target.hostname,
          port: target.port,
          path: `${target.url.pathname}${target.url.search}`,
          servername: target.hostname,
          lookup: pinnedLookup,
          // No pooled sockets: every attempt connects to the address checked for it.
          agent: false,
          secureContext,
          session: sessions.get(sessionKey),
          headers: { ...headers, host: hostHeader, ...(method === 'POST' ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
        };
        const req = (target.url.protocol === 'http:' ? httpRequest : request)(options, (res) => {
          // The status decides the outcome; the rest of the answer is read (a little) only so the
          // receiver can finish cleanly, and the deadline still closes the socket if it drags on.
          // With a judge, the outcome waits for the answer's first 16 KiB (or its end).
          const status = res.statusCode ?? 0;
          const retryAfter = res.headers['retry-after'];
          if (!judge) finish({ ...describeStatus(status, res.headers.location), ...(retryAfter ? { retryAfter } : {}) });
          const chunks: Buffer[] = [];
          let received = 0;
          const judged = (): void => {
            if (!judge) return;
            const error = judge(status, Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8'));
            finish(
              error === null
                ? { ok: true, responseStatus: status, error: null }
                : { ok: false, responseStatus: status, error, ...(retryAfter ? { retryAfter } : {}) },
            );
          };
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (judge) chunks.push(chunk);
            if (received > MAX_RESPONSE_BYTES) {
              judged();
              req.destroy();
            }
          });
          res.once('end', () => {
            judged();
            req.destroy();
          });
          // An answer cut off mid-way is judged on what arrived (finish() keeps the first outcome).
          res.once('close', judged);
          res.once('error', () => req.destroy());
        });
        req.once('socket', (socket) => socket.on('session', (session: Buffer) => keepSession(sessionKey, session)));
        req.once('close', () => clearTimeout(timer));
        const timer = setTimeout(() => {
          req.destroy();
          finish({ ok: false, responseStatus: null, error: `timed out after ${formatSeconds(timeoutMs)}` });
        }, timeoutMs);
        req.once('error', (err: NodeJS.ErrnoException) => finish({ ok: false, responseStatus: null, error: describeNetworkError(err, target) }));
        req.end(method === 'POST' ? body : undefined);
      });
    },
  };
}

function describeStatus(status: number, location: string | undefined): AttemptOutcome {
  if (status >= 200 && status < 300) return { ok: true, responseStatus: status, error: null };
  if (status >= 300 && status < 400) {
    return {
      ok: false,
      responseStatus: status,
      error: `HTTP ${status}: redirect${location ? ` to ${location.slice(0, 200)}` : ''} not followed; register the final URL`,
    };
  }
  return { ok: false, responseStatus: status, error: `HTTP ${status}` };
}

function describeNetworkError(err: NodeJS.ErrnoException, target: CheckedTarget): string {
  const where = `${target.address}:${target.port}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${where}`;
    case 'ECONNRESET':
      return `connection reset by ${where}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} is unreachable`;
    default:
      if (err.code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(err.code)) return `TLS: ${err.code}: ${err.message}`;
      return `${err.code ?? 'error'}: ${err.message}`;
  }
}

function formatSeconds(ms: number): string {
  return `${ms / 1000}s`;
}
