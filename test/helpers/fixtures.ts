/**
 * Shortcuts for tests of features that need a signed-in merchant: the merchant and its session are
 * created through the real repositories (no HTTP sign-in, no mail), then used over real HTTP.
 */
import { cookieName } from '../../src/http/auth.js';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { insertMerchant, type Merchant } from '../../src/accounts/merchants.repo.js';
import type { TestApp } from './app.js';
import type { HttpClient } from './http.js';

let counter = 0;

export interface SignedIn {
  merchant: Merchant;
  client: HttpClient;
}

/** A confirmed merchant with an owner session cookie in a fresh client. */
export async function signedInMerchant(t: TestApp, input: { email?: string; name?: string } = {}): Promise<SignedIn> {
  counter += 1;
  const now = t.clock.now();
  const merchant = await insertMerchant(
    t.deps.db,
    {
      email: input.email ?? `merchant${counter}.${now}@example.test`,
      name: input.name ?? `Merchant ${counter}`,
      passwordHash: null,
      emailVerifiedAt: now,
    },
    now,
  );
  const { token } = await createSession(t.deps.db, merchant.id, now);
  const client = t.client();
  client.cookies.set(cookieName(t.config, SESSION_COOKIE), token);
  return { merchant, client };
}
