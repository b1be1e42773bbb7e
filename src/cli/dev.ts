/**
 * `gatewayd dev` and its subcommands. The server part lives in src/devnet/ and is loaded only
 * here, on demand, so `gatewayd serve` never loads the simulated node. The subcommands are
 * clients of a running dev instance's control routes (/_dev/), from another process:
 *   gatewayd dev merchant create --email E [--name N]      (password on stdin)
 *   gatewayd dev pay INVOICE_ID [--amount A] [--late] [--from ADDRESS] [--fake-token] [--failed]
 *   gatewayd dev transfer --to ADDRESS --amount A [--from ADDRESS] [--fake-token] [--failed]
 * Each finds the instance at --url, else at server.listen of the same configuration.
 */
import { localUrl, type Config } from '../config.js';
import { untilSignal } from '../serve.js';
import { DEV_HEADER, DEV_TOKEN_HEADER, readDevToken } from './dev-token.js';
import { UsageError } from './usage.js';

export class DevCommandError extends Error {}

/** Runs the dev instance until SIGINT or SIGTERM; resolves with the exit code. */
export async function runDev(
  load: (overrides: Record<string, Record<string, unknown>>) => Config,
  database: string | undefined,
  out: (text: string) => void,
): Promise<number> {
  const { startDev, devWelcome } = await import('../devnet/dev.js');
  const dev = await startDev(load, { database });
  out(devWelcome(dev));
  return untilSignal(dev.server.deps.log, () => dev.stop());
}

/** The dev instance's base URL: --url, else server.listen (a wildcard address is reached on loopback). */
export function devUrl(config: Config, url: string | undefined): string {
  if (url !== undefined) {
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      return u.origin;
    } catch {
      throw new UsageError(`--url ${JSON.stringify(url)} is not an http(s) URL such as http://127.0.0.1:8080`);
    }
  }
  return localUrl(config.server.listen);
}

/** POSTs to a control route; the JSON answer, or a DevCommandError naming what went wrong. */
export async function callDev(base: string, path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  let res: Response;
  // The control token of the instance on that port, written by `gatewayd dev` for this user.
  const token = readDevToken(Number(new URL(base).port || (base.startsWith('https:') ? 443 : 80)));
  try {
    res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { [DEV_TOKEN_HEADER]: token } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new DevCommandError(`no dev instance answers at ${base} (start \`gatewayd dev\` first, or give --url)`);
  }
  // Only a process started by `gatewayd dev` has these routes; it marks their answers.
  if (!res.headers.has(DEV_HEADER))
    throw new DevCommandError(`${base} is not a \`gatewayd dev\` instance (a server that is not one answered HTTP ${res.status})`);
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* described below */
  }
  const error = json?.error as { code?: string; message?: string; details?: Array<{ path: string; message: string }> } | undefined;
  if (!res.ok || json === undefined) {
    const details = error?.details?.map((d) => `${d.path}: ${d.message}`).join('; ');
    throw new DevCommandError(`${error?.message ?? `HTTP ${res.status}`}${details ? ` (${details})` : ''}`);
  }
  return json;
}

/** `key: value` lines (nested objects flattened one level), or the JSON itself. */
export function printAnswer(answer: Record<string, unknown>, json: boolean, out: (line: string) => void): void {
  if (json) {
    out(JSON.stringify(answer));
    return;
  }
  for (const [key, value] of Object.entries(answer)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) out(`${key}.${k}: ${String(v)}`);
    } else {
      out(`${key}: ${Array.isArray(value) ? value.join(' ') : String(value)}`);
    }
  }
}
