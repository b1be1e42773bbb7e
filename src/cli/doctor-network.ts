/** The network checks of `gatewayd doctor`: TRON API (and which network it serves), clock, SMTP. Each has a short timeout. */
import { providerSettings } from '../chain/providers.js';
import type { Config } from '../config.js';
import { NETWORKS } from '../lib/tron.js';
import { isLoopbackSmtpHost, smtpServerName, smtpTransportOptions, startTlsRequired } from '../email/mailer.js';
import type { Finding } from './doctor-findings.js';

/** Solidified blocks trail the head by about a minute; older than this means a stuck node. */
const STALE_BLOCK_MS = 5 * 60_000;
const CLOCK_WARN_MS = 10_000;
const CLOCK_FAIL_MS = 60_000;
/** How far the solidified head usually trails real time (19 blocks of 3 s). */
const SOLIDITY_LAG_MS = 57_000;

export interface TronCheck {
  findings: Finding[];
  /** The server's Date header (ms), for the clock check. */
  dateHeader: number | undefined;
  blockTime: number | undefined;
}

/** Scheme and host of a provider URL: hosted TRON APIs (GetBlock, QuickNode) put the access token in the path. */
export function providerOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'invalid-url';
  }
}

export function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/** GET {first provider}/walletsolidity/getnowblock with its API key, as the watcher would. */
export async function checkTron(config: Config, timeoutMs: number): Promise<TronCheck> {
  // The first provider (tron.providers[0], or tron.api_url and tron.api_key).
  const provider = providerSettings(config)[0]!;
  const apiKey = provider.api_key;
  const base = provider.url.replace(/\/+$/, '');
  const url = `${base}/walletsolidity/getnowblock`;
  const shown = providerOrigin(base);
  const findings: Finding[] = [];
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey) headers['TRON-PRO-API-KEY'] = apiKey;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    findings.push({ level: 'fail', check: 'tron', detail: `${shown}: unreachable (${describeFetchError(err)})` });
    return { findings, dateHeader: undefined, blockTime: undefined };
  }
  const date = res.headers.get('date');
  const dateHeader = date && Number.isFinite(Date.parse(date)) ? Date.parse(date) : undefined;
  const body = await res.text().catch(() => '');
  if (res.status === 401 || res.status === 403) {
    findings.push({
      level: 'fail',
      check: 'tron',
      detail: `${shown} answered ${res.status}: ${apiKey ? 'tron.api_key is rejected (or rate-limited)' : 'access refused; set tron.api_key'}`,
    });
    return { findings, dateHeader, blockTime: undefined };
  }
  if (!res.ok) {
    findings.push({ level: 'fail', check: 'tron', detail: `${shown} answered HTTP ${res.status}` });
    return { findings, dateHeader, blockTime: undefined };
  }
  let number: unknown;
  let timestamp: unknown;
  try {
    const raw = (JSON.parse(body) as { block_header?: { raw_data?: { number?: unknown; timestamp?: unknown } } }).block_header?.raw_data;
    number = raw?.number;
    timestamp = raw?.timestamp;
  } catch {
    /* reported below */
  }
  if (typeof number !== 'number' || typeof timestamp !== 'number') {
    findings.push({
      level: 'fail',
      check: 'tron',
      detail: `${shown}/walletsolidity/getnowblock did not return a block (is tron.api_url a TronGrid-compatible API?)`,
    });
    return { findings, dateHeader, blockTime: undefined };
  }
  findings.push({ level: 'ok', check: 'tron', detail: `${shown}: solidified block ${number} at ${new Date(timestamp).toISOString()}` });
  findings.push(
    apiKey
      ? { level: 'ok', check: 'tron key', detail: 'tron.api_key accepted' }
      : { level: 'warn', check: 'tron key', detail: 'tron.api_key is empty: TronGrid throttles anonymous use; get a free key' },
  );
  const age = Date.now() - timestamp;
  if (age > STALE_BLOCK_MS) {
    findings.push({
      level: 'warn',
      check: 'tron',
      detail: `the solidified block is ${Math.round(age / 1000)} s old: the API's node lags (or this clock is ahead)`,
    });
  }
  findings.push(...(await checkServedNetwork(config, base, headers, timeoutMs)));
  return { findings, dateHeader, blockTime: timestamp };
}

/** POSTs a java-tron wallet call; the parsed JSON object, or why there is none. */
async function walletCall(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ json: Record<string, unknown> } | { error: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) return { error: `HTTP ${res.status}` };
    const json = JSON.parse(text) as unknown;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return { error: 'not a JSON object' };
    return { json: json as Record<string, unknown> };
  } catch (err) {
    return { error: err instanceof SyntaxError ? 'malformed JSON' : describeFetchError(err) };
  }
}

/**
 * Does the provider serve tron.network? A provider of another network answers another genesis
 * block (`/wallet/getblockbynum` 0; each network has its own), and has no contract, or another
 * one, at this network's USDT address (`/wallet/getcontract`). Either mismatch is a FAIL: the
 * watcher would look for payments on a chain where they are never made.
 */
export async function checkServedNetwork(config: Config, base: string, headers: Record<string, string>, timeoutMs: number): Promise<Finding[]> {
  const network = config.network;
  const shown = providerOrigin(base);
  const findings: Finding[] = [];
  if (network.genesisBlockId !== undefined) {
    const genesis = await walletCall(`${base}/wallet/getblockbynum`, { num: 0 }, headers, timeoutMs);
    if ('error' in genesis) {
      findings.push({ level: 'warn', check: 'chain', detail: `${shown}/wallet/getblockbynum: ${genesis.error}; the genesis block was not compared` });
    } else {
      const id = String(genesis.json.blockID ?? '').toLowerCase();
      const other = Object.values(NETWORKS).find((n) => n.genesisBlockId === id);
      findings.push(
        id === network.genesisBlockId
          ? { level: 'ok', check: 'chain', detail: `${shown} serves ${network.id} (genesis block ${id.slice(-8)})` }
          : {
              level: 'fail',
              check: 'chain',
              detail: `${shown} serves ${other ? other.id : `another network (genesis block ${id || 'missing'})`}, not ${network.id} (tron.network = "${network.name}"): fix tron.api_url or tron.network`,
            },
      );
    }
  }
  const contract = await walletCall(`${base}/wallet/getcontract`, { value: network.usdtContract, visible: true }, headers, timeoutMs);
  if ('error' in contract) {
    findings.push({ level: 'warn', check: 'usdt', detail: `${shown}/wallet/getcontract: ${contract.error}; the USDT contract's presence was not checked` });
  } else if (contract.json.contract_address === network.usdtContract) {
    findings.push({
      level: 'ok',
      check: 'usdt',
      detail: `${network.usdtContract} is a contract on ${network.id}${typeof contract.json.name === 'string' ? ` (${contract.json.name})` : ''}`,
    });
  } else {
    findings.push({
      level: 'fail',
      check: 'usdt',
      detail: `${shown} has no contract at ${network.usdtContract}, the USDT of ${network.id}: the provider serves another network; fix tron.api_url or tron.network`,
    });
  }
  return findings;
}

/**
 * This machine's clock against the TRON API's Date header (1 s resolution), else against the
 * solidified block's time (which trails real time by about a minute, so only a gross error shows).
 */
export function checkClock(dateHeader: number | undefined, blockTime: number | undefined): Finding {
  let skew: number;
  let against: string;
  let tolerance = 0;
  if (dateHeader !== undefined) {
    skew = Date.now() - dateHeader;
    against = "the TRON API's clock";
  } else if (blockTime !== undefined) {
    skew = Date.now() - blockTime - SOLIDITY_LAG_MS;
    against = 'the solidified block time';
    tolerance = SOLIDITY_LAG_MS;
  } else {
    return { level: 'warn', check: 'clock', detail: 'not checked: the TRON API gave neither a Date header nor a block' };
  }
  const text = `${Math.abs(Math.round(skew / 1000))} s ${skew >= 0 ? 'ahead of' : 'behind'} ${against}`;
  if (Math.abs(skew) > CLOCK_FAIL_MS + tolerance) {
    return { level: 'fail', check: 'clock', detail: `${text}: invoice windows are compared with block times; enable NTP (timedatectl set-ntp true)` };
  }
  if (Math.abs(skew) > CLOCK_WARN_MS + tolerance) return { level: 'warn', check: 'clock', detail: `${text}; enable NTP` };
  return { level: 'ok', check: 'clock', detail: `within ${(CLOCK_WARN_MS + tolerance) / 1000} s of ${against}` };
}

/** Connect, EHLO, STARTTLS and AUTH as the mailer would (nodemailer's verify); no mail is sent. */
export async function checkSmtp(config: Config, timeoutMs: number): Promise<Finding> {
  if (!config.email.smtp_url) {
    return { level: 'warn', check: 'smtp', detail: 'email.smtp_url is empty: registration and password reset answer 503 (use `gatewayd merchant create`)' };
  }
  const url = new URL(config.email.smtp_url);
  // Host and port only: the URL may hold the password.
  const where = smtpServerName(config);
  const required = startTlsRequired(config);
  const loopback = isLoopbackSmtpHost(url.hostname);
  const tls =
    url.protocol === 'smtps:'
      ? 'TLS from the start (smtps)'
      : required
        ? 'STARTTLS required'
        : loopback && config.email.smtp_tls === 'required'
          ? 'loopback host: exempt from email.smtp_tls = "required" (no network path to strip STARTTLS from), STARTTLS only when offered'
          : 'STARTTLS only when offered';
  // Loaded here, not at start: `gatewayd serve` imports this module too and never needs it.
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport(smtpTransportOptions(config, { connect: timeoutMs, socket: timeoutMs }));
  try {
    await transport.verify();
    const detail = `${where} answers EHLO${url.username ? ' and accepts the credentials' : ''}; ${tls}`;
    if (url.protocol === 'smtps:' || required || loopback) return { level: 'ok', check: 'smtp', detail };
    return {
      level: 'warn',
      check: 'smtp',
      detail:
        `${detail}: email.smtp_tls = "opportunistic" lets anyone on the path strip STARTTLS and read reset links${url.username ? ' and the SMTP password' : ''}; ` +
        `keep it for a relay on this machine (${url.hostname} is not loopback)`,
    };
  } catch (err) {
    const e = err as Error & { code?: string };
    const hint =
      required && url.protocol === 'smtp:' && (e.code === 'ETLS' || /STARTTLS/i.test(e.message))
        ? ' (STARTTLS is required: use smtps://, enable STARTTLS on the server, or for a relay on this machine set email.smtp_tls = "opportunistic")'
        : '';
    return { level: 'fail', check: 'smtp', detail: `${where}: ${e.code ? `${e.code}: ` : ''}${e.message.split('\n')[0]}${hint}` };
  } finally {
    transport.close();
  }
}
