/**
 * Outgoing mail over SMTP (email.smtp_url) through nodemailer. With no SMTP URL the mailer is
 * unavailable and the operations that need mail answer 503 email_unavailable.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { Log } from '../lib/log.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** What kind of mail this is, for logs (e.g. "verify", "reset", "support.staff"); never user text. */
  kind?: string;
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
  const transport: Transporter = nodemailer.createTransport({
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
        const { kind: _kind, ...mail } = message;
        const info = await transport.sendMail({ from: config.email.from, ...mail });
        const accepted = Array.isArray(info.accepted) && info.accepted.length > 0;
        if (!accepted) log.warn({ mail_kind: message.kind ?? 'mail' }, 'mail not accepted by the SMTP server');
        return accepted ? { accepted } : { accepted, error: 'rejected by the SMTP server' };
      } catch (err) {
        const code = (err as { responseCode?: number; code?: string }).responseCode ?? (err as { code?: string }).code;
        log.warn({ mail_kind: message.kind ?? 'mail', smtp_error: code ?? 'error' }, 'mail not sent');
        return { accepted: false, error: `SMTP error ${code ?? ''}`.trim() };
      }
    },
    close: () => transport.close(),
  };
}
