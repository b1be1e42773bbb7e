/**
 * A small client for the Telegram Bot API (https://core.telegram.org/bots/api): getMe, getUpdates
 * (long polling with an offset) and sendMessage. Every answer is `{ok, result}` or
 * `{ok: false, error_code, description, parameters?: {retry_after}}`; a 429's `retry_after`
 * (seconds) is kept so the outbox waits at least that long. The token is in the URL path: it is
 * never logged (errors carry the method and Telegram's description only).
 */
import { z } from 'zod';

export class BotApiError extends Error {
  constructor(
    readonly method: string,
    message: string,
    readonly errorCode?: number,
    /** Telegram's parameters.retry_after, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'BotApiError';
  }
}

const envelope = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }).loose(),
  z
    .object({
      ok: z.literal(false),
      error_code: z.number().int().optional(),
      description: z.string().optional(),
      parameters: z
        .object({ retry_after: z.number().int().min(0).optional() })
        .loose()
        .optional(),
    })
    .loose(),
]);

const meSchema = z.object({ id: z.number(), is_bot: z.boolean(), username: z.string().optional() }).loose();
const updateSchema = z
  .object({
    update_id: z.number().int(),
    message: z
      .object({
        chat: z.object({ id: z.union([z.number().int(), z.string()]) }).loose(),
        text: z.string().optional(),
      })
      .loose()
      .optional(),
  })
  .loose();

export interface BotUpdate {
  updateId: number;
  chatId: string | null;
  text: string | null;
}

export class BotApi {
  private readonly base: string;

  constructor(
    apiUrl: string,
    token: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.base = `${apiUrl.replace(/\/+$/, '')}/bot${token}`;
  }

  async getMe(): Promise<{ id: number; username: string | null }> {
    const me = meSchema.safeParse(await this.call('getMe', {}));
    if (!me.success) throw new BotApiError('getMe', 'unexpected getMe shape');
    return { id: me.data.id, username: me.data.username ?? null };
  }

  /** Updates from `offset` on, waiting up to `timeoutSeconds` for one (long polling). */
  async getUpdates(offset: number, timeoutSeconds: number): Promise<BotUpdate[]> {
    const body = await this.call('getUpdates', { offset, timeout: timeoutSeconds, allowed_updates: ['message'] }, timeoutSeconds * 1000);
    const list = z.array(updateSchema).safeParse(body);
    if (!list.success) throw new BotApiError('getUpdates', 'unexpected getUpdates shape');
    return list.data.map((u) => ({ updateId: u.update_id, chatId: u.message ? String(u.message.chat.id) : null, text: u.message?.text ?? null }));
  }

  async sendMessage(chatId: string, text: string): Promise<void> {
    await this.call('sendMessage', { chat_id: chatId, text, link_preview_options: { is_disabled: true } });
  }

  private async call(method: string, params: Record<string, unknown>, extraMs = 0): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.base}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(params),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs + extraMs),
      });
      text = await res.text();
    } catch (err) {
      throw new BotApiError(method, `request failed: ${err instanceof Error ? err.name : 'error'}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new BotApiError(method, `HTTP ${res.status}: not JSON`, res.status);
    }
    const parsed = envelope.safeParse(json);
    if (!parsed.success) throw new BotApiError(method, `HTTP ${res.status}: unexpected answer shape`, res.status);
    const data = parsed.data;
    if (data.ok === true) return data.result;
    const retry = data.parameters?.retry_after;
    throw new BotApiError(
      method,
      (data.description ?? `HTTP ${res.status}`).slice(0, 200),
      data.error_code ?? res.status,
      retry === undefined ? undefined : retry * 1000,
    );
  }
}
