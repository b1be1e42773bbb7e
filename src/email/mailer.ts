/**
 * Outgoing mail over SMTP (email.smtp_url) through nodemailer. With no SMTP URL the mailer is
 * unavailable and the operations that need mail answer 503 email_unavailable. On a test network
 * every mail, whoever composed it, is marked as such here: a subject prefix and a first line.
 */
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
    marked.html = body ? `${message.html.slice(0, body.index + body[0].length)}\n${banner}${message.html.slice(body.index + body[0].length)}` : `${banner}${message.html}`;
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

export function createMailer(config: Config, log: Log): Mailer {
  const url = config.email.smtp_url;
  if (!url) {
    return {
      available: false,
      send: async () => ({ accepted: false, error: 'email is not configured' }),
      close: () => undefined,
    };
  }
  const parsed = new URL(url);
  // nodemailer is loaded with the first message, not at start: resident memory a server that is
  // not sending mail right now does not need.
  let transport: Promise<Transporter> | undefined;
  const connect = async (): Promise<Transporter> => (await import('nodemailer')).default.createTransport({
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : parsed.protocol === 'smtps:' ? 465 : 587,
    secure: parsed.protocol === 'smtps:',
    auth: parsed.username ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } : undefined,
    // smtp:// upgrades with STARTTLS when offered; a test server on loopback may not offer it.
    tls: { servername: parsed.hostname },
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
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
    close: () => void transport?.then((t) => t.close(), () => undefined),
  };
}
