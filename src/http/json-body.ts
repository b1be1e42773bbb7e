/**
 * The API's JSON body guard: at most 64 KiB, valid JSON, declared as JSON; an empty body counts as
 * {}. The parsed body is cached where the zod validators read it, so it is read and parsed once.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../lib/errors.js';
import { allowedMethods, type RouteTable } from './allowed-methods.js';
import type { AppEnv } from './context.js';

export const MAX_JSON_BODY = 64 * 1024;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE_RE = /^application\/([\w.-]+\+)?json\s*(;.*)?$/i;

/** The guard for the routes of `app`; requests no route of `app` answers pass through untouched. */
export function jsonBody(app: RouteTable): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Unknown routes and wrong methods answer 404/405 whatever the body holds.
    if (!BODY_METHODS.has(c.req.method) || !allowedMethods(app, c.req.path).includes(c.req.method)) return next();
    const text = await readJsonBodyText(c);
    if (text.trim() === '') {
      // No body at all: validate it as {} (operations whose body is `{}` accept an empty POST).
      const headers = new Headers(c.req.raw.headers);
      headers.set('content-type', 'application/json');
      c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers, body: '{}' });
      cacheBody(c, '{}', {});
      return next();
    }
    const type = c.req.header('content-type') ?? '';
    if (!JSON_TYPE_RE.test(type)) throw new AppError('invalid_json', 'The request body must be JSON with Content-Type: application/json');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('invalid_json', 'The request body is not valid JSON');
    }
    cacheBody(c, text, parsed);
    return next();
  };
}

/**
 * What the validators read. hono keeps promises in bodyCache (its type says values) and its json()
 * reads the cached text: a cached `json` alone would be re-serialized through a Response first.
 */
function cacheBody(c: Context<AppEnv>, text: string, parsed: unknown): void {
  c.req.bodyCache = { text: Promise.resolve(text), json: Promise.resolve(parsed) } as unknown as typeof c.req.bodyCache;
}

const tooLarge = () => new AppError('payload_too_large', `The request body exceeds ${MAX_JSON_BODY} bytes`);

/**
 * The body as UTF-8 text, at most MAX_JSON_BODY bytes (413 beyond, whatever Content-Length says).
 * Under @hono/node-server it is read straight from Node's IncomingMessage: asking hono for the body
 * builds a full fetch Request with a web stream around it, which cost more than the rest of an
 * invoice creation's HTTP handling. Elsewhere (app.request() in tools) hono's bodyLimit reads it.
 */
async function readJsonBodyText(c: Context<AppEnv>): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) {
    let text = '';
    const limit = bodyLimit({
      maxSize: MAX_JSON_BODY,
      onError: () => {
        throw tooLarge();
      },
    });
    await limit(c, async () => {
      text = await c.req.text();
    });
    return text;
  }
  const declared = Number(c.req.header('content-length'));
  if (declared > MAX_JSON_BODY) throw tooLarge();
  const body = await readIncoming(incoming);
  // As fetch's text(): UTF-8, a leading byte order mark dropped, bad sequences replaced.
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The rest of a Node request body, refused with 413 as soon as it passes MAX_JSON_BODY bytes. */
function readIncoming(incoming: IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_JSON_BODY) {
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    if (incoming.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}
