/**
 * Captcha (captcha.* in docs/configuration.md): when captcha.provider is set, sign-in, registration, forgot
 * password, contact and chat start need a `captcha_token`, verified server-side with the provider's
 * siteverify and remembered so each token is used once.
 */
import { AppError } from '../lib/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';

type Deps = { db: Db; config: Config; clock: Clock; log: Log };

const DEFAULT_VERIFY_URL = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
} as const;

const VERIFY_TIMEOUT_MS = 5000;

export function captchaEnabled(deps: Deps): boolean {
  return deps.config.captcha.provider !== '';
}

/**
 * Throws 400 captcha_invalid (missing, rejected or reused token) or 503 captcha_unavailable
 * (provider answering 5xx, garbage or not at all). Does nothing when captcha is off.
 */
export async function requireCaptcha(deps: Deps, token: string | undefined, remoteIp: string): Promise<void> {
  const { provider, secret_key, verify_url } = deps.config.captcha;
  if (provider === '') return;
  if (!token) throw new AppError('captcha_invalid', 'captcha_token is required');
  const tokenHash = sha256Hex(token);
  const used = await deps.db.selectFrom('captcha_tokens').select('token_hash').where('token_hash', '=', tokenHash).executeTakeFirst();
  if (used) throw new AppError('captcha_invalid', 'This captcha token was already used');

  const form = new URLSearchParams({ secret: secret_key, response: token });
  if (remoteIp && remoteIp !== 'unknown') form.set('remoteip', remoteIp);
  let body: unknown;
  try {
    const res = await fetch(verify_url || DEFAULT_VERIFY_URL[provider], {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    if (res.status >= 500) throw new Error(`siteverify answered ${res.status}`);
    body = await res.json();
  } catch (err) {
    deps.log.warn({ provider, reason: (err as Error).message }, 'captcha verification unavailable');
    throw new AppError('captcha_unavailable', 'Captcha verification is temporarily unavailable; try again');
  }
  if (typeof body !== 'object' || body === null || typeof (body as { success?: unknown }).success !== 'boolean') {
    throw new AppError('captcha_unavailable', 'Captcha verification is temporarily unavailable; try again');
  }
  // Remember the token whatever the verdict: a token is single use either way.
  await deps.db
    .insertInto('captcha_tokens')
    .values({ token_hash: tokenHash, used_at: deps.clock.now() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  if ((body as { success: boolean }).success !== true) throw new AppError('captcha_invalid', 'The captcha was not solved');
}
