/**
 * A loopback stand-in for the Telegram Bot API in its real shapes: POST /bot<token>/<method> with a
 * JSON body, answered `{ok: true, result}` or `{ok: false, error_code, description, parameters?}`.
 * getMe, getUpdates (honours `offset`: updates below it are confirmed and dropped, as Telegram
 * does) and sendMessage (records the message). `failNext` queues an error answer for a method.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SentMessage {
  chat_id: string;
  text: string;
}

export interface FakeBotApi {
  url: string;
  token: string;
  sent: SentMessage[];
  /** The bodies of getUpdates requests, in order. */
  updateRequests: Array<Record<string, unknown>>;
  /** Queues an incoming text message from a private chat. */
  message(chatId: number, text: string): void;
  failNext(method: string, status: number, body: Record<string, unknown>): void;
  close(): Promise<void>;
}

export const BOT_TOKEN = '123456789:AAFakeTokenForTestsOnly_abcdefghijkl';

export async function startFakeBotApi(options: { username?: string } = {}): Promise<FakeBotApi> {
  const updates: Array<Record<string, unknown>> = [];
  let nextUpdateId = 100;
  let nextMessageId = 1;
  const failures = new Map<string, Array<{ status: number; body: Record<string, unknown> }>>();
  const sent: SentMessage[] = [];
  const updateRequests: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const m = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
      if (!m || m[1] !== BOT_TOKEN) return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const method = m[2]!;
      const params = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
      const queued = failures.get(method)?.shift();
      if (queued) return reply(queued.status, queued.body);
      switch (method) {
        case 'getMe':
          return reply(200, {
            ok: true,
            result: { id: 123456789, is_bot: true, first_name: 'Gateway', username: options.username ?? 'gatewayd_test_bot', can_join_groups: true },
          });
        case 'getUpdates': {
          updateRequests.push(params);
          const offset = typeof params.offset === 'number' ? params.offset : 0;
          while (updates.length > 0 && (updates[0]!.update_id as number) < offset) updates.shift();
          return reply(200, { ok: true, result: updates });
        }
        case 'sendMessage': {
          if (typeof params.chat_id !== 'string' && typeof params.chat_id !== 'number')
            return reply(400, { ok: false, error_code: 400, description: 'Bad Request: chat_id is empty' });
          sent.push({ chat_id: String(params.chat_id), text: String(params.text) });
          return reply(200, {
            ok: true,
            result: {
              message_id: nextMessageId++,
              date: Math.floor(Date.now() / 1000),
              chat: { id: Number(params.chat_id), type: 'private' },
              text: params.text,
            },
          });
        }
        default:
          return reply(404, { ok: false, error_code: 404, description: 'Not Found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token: BOT_TOKEN,
    sent,
    updateRequests,
    message(chatId, text) {
      updates.push({
        update_id: nextUpdateId++,
        message: {
          message_id: nextMessageId++,
          from: { id: chatId, is_bot: false, first_name: 'Owner' },
          chat: { id: chatId, type: 'private', first_name: 'Owner' },
          date: 1767225600,
          text,
        },
      });
    },
    failNext(method, status, body) {
      const list = failures.get(method) ?? [];
      list.push({ status, body });
      failures.set(method, list);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
