/**
 * Outgoing mail over SMTP (email.smtp_url) through nodemailer. With no SMTP URL the mailer is
 * unavailable and the operations that need mail answer 503 email_unavailable. On a test network
 * every mail, whoever composed it, is marked as such here: a subject prefix and a first line.
 */
import { isIP } from 'node:net';
import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import { DEFAULT_LOCALE, isRtl, translate, type Locale } from '../lib/i18n.js';
import type { Log } from '../lib/log.js';
import type { TronNetwork } from '../lib/tron.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** What kind of mail this is, for logs (e.g. "verify", "reset", "support.staff"); never user text. */
  kind?: string;
  /** The recipient's language (for the test-network marks); English when unknown. */
  locale?: Locale;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * A mail of a test network, marked in the recipient's language: "[Test network]" before the
 * subject, and "Test network (tron-nile): no real money." as the first line of the text and as a
 * banner at the top of the HTML body.
 */
export function markTestNetwork(message: MailMessage, network: Readonly<TronNetwork>): MailMessage {
  const locale = message.locale ?? DEFAULT_LOCALE;
  const line = translate(locale, 'email.common.test_network', { network: network.id });
  const marked: MailMessage = {
    ...message,
    subject: `${translate(locale, 'email.common.test_subject')} ${message.subject}`,
    text: `${line}\n\n${message.text}`,
  };
  if (message.html !== undefined) {
    const banner =
      `<div dir="${isRtl(locale) ? 'rtl' : 'ltr'}" style="margin:0;padding:10px 16px;background:#fff4d6;border-bottom:2px solid #e0b030;` +
      `color:#14181f;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:15px;font-weight:700;text-align:center;">` +
      `${line.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!)}</div>`;
    const body = /<body[^>]*>/i.exec(message.html);
    marked.html = body
      ? `${message.html.slice(0, body.index + body[0].length)}\n${banner}${message.html.slice(body.index + body[0].length)}`
      : `${banner}${message.html}`;
  }
  return marked;
}

export interface SendResult {
  /** True when the SMTP server accepted the message. */
  accepted: boolean;
  /** Why it was not accepted (never includes the message body). */
  error?: string;
}

export interface Mailer {
  readonly available: boolean;
  send(message: MailMessage): Promise<SendResult>;
  close(): void;
}

/** Where the SMTP server is, without the credentials the URL may hold: `smtp://host:port`. */
export function smtpServerName(config: Config): string {
  const url = new URL(config.email.smtp_url);
  return `${url.protocol}//${url.hostname}:${smtpPort(url)}`;
}

function smtpPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587;
}

/**
 * A host on this machine (127.0.0.0/8, ::1, `localhost`): no network path lies between gatewayd and
 * it, so nobody can strip STARTTLS, and smtp_tls = "required" does not apply to it (a local postfix
 * on smtp://127.0.0.1:25 works with the defaults).
 */
export function isLoopbackSmtpHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether smtp:// must upgrade with STARTTLS: smtp_tls = "required", except for a loopback host. */
export function startTlsRequired(config: Config): boolean {
  const url = new URL(config.email.smtp_url);
  return url.protocol === 'smtp:' && config.email.smtp_tls === 'required' && !isLoopbackSmtpHost(url.hostname);
}

/**
 * nodemailer's options for email.smtp_url, shared by the mailer and `gatewayd doctor`. smtps:// is
 * TLS from the first byte; smtp:// must upgrade with STARTTLS (`requireTLS`: a server, or someone
 * on the path, that does not offer it gets no message and no credentials) unless email.smtp_tls is
 * "opportunistic" or the host is loopback. Certificates are always verified against the system's CAs.
 */
export function smtpTransportOptions(config: Config, timeouts: { connect: number; socket: number }) {
  const url = new URL(config.email.smtp_url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    host,
    port: smtpPort(url),
    secure: url.protocol === 'smtps:',
    requireTLS: startTlsRequired(config),
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    // SNI names a host; an address literal (smtp://192.0.2.1) is checked against the certificate's IP names.
    tls: isIP(host) ? {} : { servername: host },
    connectionTimeout: timeouts.connect,
    greetingTimeout: timeouts.connect,
    socketTimeout: timeouts.socket,
  };
}

export function createMailer(config: Config, log: Log): Mailer {
  const url = config.email.smtp_url;
  if (!url) {
    return {
      available: false,
      send: async () => ({ accepted: false, error: 'email is not configured' }),
      close: () => undefined,
    };
  }
  // nodemailer is loaded with the first message, not at start: resident memory a server that is
  // not sending mail right now does not need.
  let transport: Promise<Transporter> | undefined;
  const connect = async (): Promise<Transporter> =>
    (await import('nodemailer')).default.createTransport(smtpTransportOptions(config, { connect: 10_000, socket: 20_000 }));
  return {
    available: true,
    async send(message) {
      try {
        const { kind: _kind, locale: _locale, ...mail } = config.network.test ? markTestNetwork(message, config.network) : message;
        transport ??= connect();
        const info = await (await transport).sendMail({ from: config.email.from, ...mail });
        const accepted = Array.isArray(info.accepted) && info.accepted.length > 0;
        if (!accepted) log.warn({ mail_kind: message.kind ?? 'mail' }, 'mail not accepted by the SMTP server');
        return accepted ? { accepted } : { accepted, error: 'rejected by the SMTP server' };
      } catch (err) {
        const code = (err as { responseCode?: number; code?: string }).responseCode ?? (err as { code?: string }).code;
        log.warn({ mail_kind: message.kind ?? 'mail', smtp_error: code ?? 'error' }, 'mail not sent');
        return { accepted: false, error: `SMTP error ${code ?? ''}`.trim() };
      }
    },
    close: () =>
      void transport?.then(
        (t) => t.close(),
        () => undefined,
      ),
  };
}
