/**
 * A real SMTP server on loopback (the `smtp-server` package) that keeps every message it accepts,
 * parsed enough for tests: subject, plain-text and HTML parts, and the links inside. It can be told
 * to refuse messages (550 at RCPT TO, like an unknown mailbox, or at DATA, like a spam filter).
 * By default it offers no STARTTLS and no authentication, like a local relay: `smtp.email` is the
 * `[email]` configuration for it, with the explicit opt-out `smtp_tls = "opportunistic"` (the
 * default, "required", refuses such a server). Options: `starttls` (a key and certificate, e.g.
 * from test-ca.ts: STARTTLS is offered) and `auth` (AUTH is accepted, even in plain text, and every
 * username and password presented is recorded in `logins`, as a man in the middle would see them).
 *
 *   const smtp = await startSmtp();
 *   const t = await startTestApp({ config: { email: smtp.email } });
 *   const mail = await smtp.waitFor((m) => m.to.includes('a@b.test'));
 */
import { networkInterfaces } from 'node:os';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  headers: Record<string, string>;
  subject: string;
  text: string;
  html: string;
  /** Whether the message arrived over TLS (after STARTTLS). */
  overTls: boolean;
}

export type RejectMode = false | 'rcpt' | 'data';

export interface SmtpOptions {
  /** Offer STARTTLS with this key and certificate. */
  starttls?: { key: string; cert: string };
  /** Accept AUTH (also without TLS) and record the credentials presented. */
  auth?: boolean;
  /** Listen on this address instead of 127.0.0.1 (a non-loopback one: see nonLoopbackAddress). */
  host?: string;
}

/** An IPv4 address of this machine that is not loopback, if it has one (a mail server "on the network"). */
export function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
}

export interface SmtpStub {
  url: string;
  port: number;
  /** The `[email]` settings that reach this server (see the module comment). */
  email: { smtp_url: string; smtp_tls: 'required' | 'opportunistic' };
  readonly messages: ReceivedMail[];
  /** Credentials presented with AUTH (only with the `auth` option). */
  readonly logins: Array<{ username: string; password: string; overTls: boolean }>;
  /** Refuse the following messages (550) at RCPT TO or DATA; false accepts again. */
  reject(mode: RejectMode): void;
  /** Resolves with the first message (already received or arriving later) that matches. */
  waitFor(match?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtp(options: SmtpOptions = {}): Promise<SmtpStub> {
  const messages: ReceivedMail[] = [];
  const logins: SmtpStub['logins'] = [];
  const waiters: Array<{ match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }> = [];
  let rejectMode: RejectMode = false;
  const refusal = (): Error => Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: [...(options.starttls ? [] : ['STARTTLS']), ...(options.auth ? [] : ['AUTH'])],
    ...(options.starttls ?? {}),
    allowInsecureAuth: true,
    onAuth(auth, session, callback) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '', overTls: session.secure });
      callback(null, { user: auth.username });
    },
    logger: false,
    onRcptTo(_address, _session, callback) {
      callback(rejectMode === 'rcpt' ? refusal() : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (rejectMode === 'data') return callback(refusal());
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'));
        mail.from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mail.to = session.envelope.rcptTo.map((r) => r.address);
        mail.overTls = session.secure;
        messages.push(mail);
        for (const w of [...waiters]) {
          if (w.match(mail)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://${host}:${port}`,
    port,
    email: { smtp_url: `smtp://${host}:${port}`, smtp_tls: options.starttls ? 'required' : 'opportunistic' },
    messages,
    logins,
    reject(mode) {
      rejectMode = mode;
    },
    waitFor(match = () => true, timeoutMs = 5000) {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve: (m: ReceivedMail) => (clearTimeout(timer), resolve(m)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The links (href targets and bare URLs) of a mail's text part. */
export function linksIn(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0]);
}

/** The token of the first `#verify=` / `#reset=` link in a mail's text part. */
export function fragmentToken(mail: ReceivedMail, name: 'verify' | 'reset'): string {
  const m = new RegExp(`#${name}=([A-Za-z0-9_-]+)`).exec(mail.text);
  if (!m) throw new Error(`no #${name}= link in the mail "${mail.subject}"`);
  return m[1]!;
}

// --- A small MIME reader: enough for what nodemailer writes (multipart, quoted-printable, base64). ---

function splitHead(raw: string): { headers: Record<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at === -1 ? raw : raw.slice(0, at);
  const body = at === -1 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const ch = soft[i]!;
    if (ch === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(ch, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    default:
      return body;
  }
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=). */
export function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_w, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}

function collectParts(raw: string, out: { text: string; html: string }): void {
  const { headers, body } = splitHead(raw);
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) {
      if (part.startsWith('--')) break;
      collectParts(part.replace(/^\r?\n/, ''), out);
    }
    return;
  }
  const decoded = decodeBody(body, headers['content-transfer-encoding']);
  if (/^text\/html/i.test(type)) out.html += decoded;
  else if (/^text\/plain/i.test(type)) out.text += decoded;
}

export function parseMail(raw: string): ReceivedMail {
  const { headers } = splitHead(raw);
  const parts = { text: '', html: '' };
  collectParts(raw, parts);
  return { from: '', to: [], raw, headers, subject: decodeHeader(headers.subject ?? ''), text: parts.text, html: parts.html, overTls: false };
}
