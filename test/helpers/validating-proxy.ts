/**
 * A validating proxy on loopback, as an integrator puts one in front of a server (Prism's proxy
 * mode, an API gateway checking the contract): every request is judged against the document the
 * server serves before it is forwarded, and every answer against the same document before it is
 * passed back. Nothing is refused: what does not match is recorded in `violations`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { documentValidator } from './openapi-validator.js';

export interface ValidatingProxy {
  url: string;
  /** One line per request or answer outside the document. */
  violations: string[];
  /** The requests judged (those naming an operation of the document). */
  checked: string[];
  close(): Promise<void>;
}

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The operation a concrete path names, with its path values. */
function operationOf(doc: Doc, method: string, pathname: string): { template: string; params: Record<string, string> } | undefined {
  for (const template of Object.keys(doc.paths)) {
    if (!doc.paths[template][method.toLowerCase()]) continue;
    const names: string[] = [];
    const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
    const m = re.exec(pathname);
    if (m) return { template, params: Object.fromEntries(names.map((n, i) => [n, m[i + 1]!])) };
  }
  return undefined;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A proxy to `target` judging traffic by `doc` (the document `target` serves). */
export async function startValidatingProxy(target: string, doc: Doc): Promise<ValidatingProxy> {
  const validator = documentValidator(doc);
  const violations: string[] = [];
  const checked: string[] = [];
  const targetOrigin = new URL(target).origin;
  let ownOrigin = '';
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await bodyOf(req);
      const url = new URL(req.url ?? '/', target);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      // The client speaks to the proxy's origin; the server checks its own.
      if (headers.origin === ownOrigin) headers.origin = targetOrigin;
      const method = req.method ?? 'GET';
      const op = operationOf(doc, method, url.pathname);
      const said = `${method} ${url.pathname}${url.search}`;
      if (op) {
        checked.push(said);
        let body: unknown;
        if (raw.length > 0) {
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            body = raw.toString('utf8');
          }
        }
        const query = [...url.searchParams.entries()];
        for (const problem of validator.request(method, op.template, { path: op.params, query, headers, body })) violations.push(`${said}: request ${problem}`);
      } else if (url.pathname.startsWith('/api/')) violations.push(`${said}: no operation of the document`);
      const answer = await fetch(url, { method, headers, body: raw.length > 0 ? raw : undefined, redirect: 'manual' });
      const text = await answer.text();
      if (op) {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON: judged by its content type */
        }
        for (const problem of validator.response(method, op.template, answer.status, parsed, answer.headers.get('content-type')))
          violations.push(`${said}: answer ${problem}`);
      }
      const out: Record<string, string | string[]> = {};
      answer.headers.forEach((v, k) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'set-cookie'].includes(k)) out[k] = v;
      });
      const cookies = answer.headers.getSetCookie();
      if (cookies.length > 0) out['set-cookie'] = cookies;
      res.writeHead(answer.status, out).end(text);
    })().catch((err: unknown) => {
      violations.push(`${req.method} ${req.url}: the proxy failed: ${String(err)}`);
      res.writeHead(502).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ownOrigin = url;
  return {
    url,
    violations,
    checked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
