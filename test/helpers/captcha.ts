/**
 * A loopback stand-in for a captcha provider's siteverify endpoint (Turnstile and hCaptcha share
 * the form): it records each verification and answers as told: yes, no, 500, garbage, or never.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SiteverifyMode = 'yes' | 'no' | '500' | 'garbage' | 'hang';

export interface SiteverifyStub {
  url: string;
  mode: SiteverifyMode;
  /** The form of every verification request received. */
  readonly requests: URLSearchParams[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startSiteverify(mode: SiteverifyMode = 'yes'): Promise<SiteverifyStub> {
  const requests: URLSearchParams[] = [];
  const stub: SiteverifyStub = {
    url: '',
    mode,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer(async (req, res) => {
    requests.push(new URLSearchParams(await readBody(req)));
    switch (stub.mode) {
      case 'yes':
      case 'no':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(stub.mode === 'yes' ? { success: true, 'error-codes': [] } : { success: false, 'error-codes': ['invalid-input-response'] }));
        return;
      case '500':
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error');
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>not json</html>');
        return;
      case 'hang':
        return; // never answers; the caller's time-out decides
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
  return stub;
}
