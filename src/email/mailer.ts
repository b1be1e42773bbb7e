/**
 * Outgoing mail over SMTP (email.smtp_url) through nodemailer. With no SMTP URL the mailer is
 * unavailable and the operations that need mail answer 503 email_unavailable.
 */
import { isIP } from 'node:net';
import type { Transporter } from 'nodemailer';
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

/** Where the SMTP server is, without the credentials the URL may hold: `smtp://host:port`. */
export function smtpServerName(config: Config): string {
  const url = new URL(config.email.smtp_url);
  return `${url.protocol}//${url.hostname}:${smtpPort(url)}`;
}

function smtpPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587;
}

/**
 * nodemailer's options for email.smtp_url, shared by the mailer and `gatewayd doctor`. smtps:// is
 * TLS from the first byte; smtp:// must upgrade with STARTTLS (`requireTLS`: a server, or someone
 * on the path, that does not offer it gets no message and no credentials) unless email.smtp_tls is
 * "opportunistic". Certificates are always verified against the system's CAs.
 */
export function smtpTransportOptions(config: Config, timeouts: { connect: number; socket: number }) {
  const url = new URL(config.email.smtp_url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    host,
    port: smtpPort(url),
    secure: url.protocol === 'smtps:',
    requireTLS: url.protocol === 'smtp:' && config.email.smtp_tls === 'required',
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
        const { kind: _kind, ...mail } = message;
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
