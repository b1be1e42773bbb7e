/** Accounts test helpers: an app wired to a loopback SMTP server, and sign-up through real HTTP and real mail. */
import assert from 'node:assert/strict';
import { startTestApp, type ConfigOverrides, type TestApp, type TestAppOptions } from './app.js';
import type { HttpClient } from './http.js';
import { fragmentToken, startSmtp, type SmtpStub } from './smtp.js';
import { GOOGLE_CLIENT_ID, startGoogle, type GoogleStub } from './google.js';

export interface MailApp {
  t: TestApp;
  smtp: SmtpStub;
  close(): Promise<void>;
}

/** Rate limits are off unless the test sets them (many sign-ins come from one loopback address). */
export async function startMailApp(config: ConfigOverrides = {}, options: Omit<TestAppOptions, 'config'> = {}): Promise<MailApp> {
  const smtp = await startSmtp();
  const t = await startTestApp({
    ...options,
    config: {
      ...config,
      email: { ...smtp.email, ...(config.email ?? {}) },
      rate_limits: { auth_per_ip: 0, auth_per_email: 0, ...(config.rate_limits ?? {}) },
    },
  });
  return {
    t,
    smtp,
    async close() {
      await t.close();
      await smtp.close();
    },
  };
}

let counter = 0;
export function uniqueEmail(tag = 'owner'): string {
  counter += 1;
  return `${tag}${counter}.${process.pid}@shop.example`;
}

export const PASSWORD = 'correct horse battery staple';

/**
 * Registers through the API and returns the confirmation token read from the real mail. The
 * registering client keeps the registration cookie: confirm with the same client to keep the password.
 */
export async function registerAndReadToken(
  app: MailApp,
  email: string,
  password = PASSWORD,
  extra: Record<string, unknown> = {},
  client: HttpClient = app.t.client(),
): Promise<string> {
  const before = app.smtp.messages.length;
  const res = await client.post('/auth/register', { email, password, ...extra });
  assert.equal(res.status, 201, res.text);
  const mail = await app.smtp.waitFor((m, i = app.smtp.messages.indexOf(m)) => i >= before && m.to.includes(email.toLowerCase()));
  return fragmentToken(mail, 'verify');
}

/** A confirmed account made through registration and the emailed link; the client holds its session. */
export async function confirmedAccount(
  app: MailApp,
  email = uniqueEmail(),
  password = PASSWORD,
): Promise<{ email: string; client: HttpClient; merchantId: string }> {
  const client = app.t.client();
  const token = await registerAndReadToken(app, email, password, {}, client);
  const res = await client.post('/auth/verify-email', { token });
  assert.equal(res.status, 200, res.text);
  return { email, client, merchantId: res.body.merchant.id };
}

/** A mail app with Google sign-in configured against a loopback Google stand-in; close() stops both. */
export async function startGoogleMailApp(): Promise<MailApp & { google: GoogleStub }> {
  const google = await startGoogle();
  const app = await startMailApp({ google: { client_id: GOOGLE_CLIENT_ID, jwks_url: google.jwksUrl } });
  return {
    ...app,
    google,
    async close() {
      await app.close();
      await google.close();
    },
  };
}
