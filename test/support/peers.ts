/**
 * Real peers on loopback for the support tests: an SMTP server that keeps what it receives, and a
 * captcha siteverify stand-in whose verdict the test chooses.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface SmtpPeer {
  url: string;
  mails: ReceivedMail[];
  /** Waits until at least `count` mails arrived (or fails after `ms`). */
  waitFor(count: number, ms?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<SmtpPeer> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(count, ms = 5000) {
      const until = Date.now() + ms;
      while (mails.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} mails, got ${mails.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return mails;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Decodes a quoted-printable mail body enough to search it for text. */
export function mailText(raw: string): string {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return Buffer.from(
    body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8');
}

export interface SiteverifyPeer {
  url: string;
  /** What the next requests get: a verdict, or an HTTP 500. */
  mode: 'pass' | 'fail' | 'error';
  requests: URLSearchParams[];
  close(): Promise<void>;
}

export async function startSiteverify(): Promise<SiteverifyPeer> {
  const peer: SiteverifyPeer = { url: '', mode: 'pass', requests: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      peer.requests.push(new URLSearchParams(body));
      if (peer.mode === 'error') {
        res.writeHead(500).end('oops');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: peer.mode === 'pass' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
  peer.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return peer;
}
