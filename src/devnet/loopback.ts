/** The HTTP plumbing the simulated nodes share: a server on 127.0.0.1 and a bounded request body. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A request's body: the first `maxBytes` of it (a simulated node never buffers an unbounded body),
 * and whether it was longer.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<{ text: string; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
    });
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > maxBytes }));
    req.on('error', reject);
  });
}

/** Listens on 127.0.0.1 (port 0: any free one); a handler that throws answers 500. */
export async function listenLoopback(
  port: number,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Stops a server: the answers held back on purpose (a hanging provider) end first, then every connection. */
export async function closeServer(server: Server, hung: Iterable<ServerResponse>): Promise<void> {
  for (const res of hung) res.destroy();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
