/**
 * Real-browser tests: headless Chromium from the system (/usr/bin/chromium; never a downloaded
 * browser) driven by playwright-core, against a test app whose public_url is its own loopback
 * address (so the Origin rule holds for the pages' own requests).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { startTestApp, type ConfigOverrides, type TestApp, type TestAppOptions } from './app.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A test app listening where its public_url says. */
export async function startBrowserApp(options: TestAppOptions = {}): Promise<TestApp> {
  const port = await freePort();
  const config: ConfigOverrides = { ...options.config };
  config.server = { public_url: `http://127.0.0.1:${port}`, ...(config.server ?? {}) };
  return startTestApp({ ...options, config, port });
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors, uncaught page errors (CSP violations show up here) and failed responses. */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh persistent context (own profile folder) with one page. */
export async function openBrowser(
  options: { locale?: string; viewport?: { width: number; height: number }; javaScript?: boolean } = {},
): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'gatewayd-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    locale: options.locale ?? 'en-US',
    viewport: options.viewport ?? { width: 390, height: 844 },
    javaScriptEnabled: options.javaScript ?? true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('response', (res) => {
    if (res.status() >= 400) errors.push(`${res.status()} ${res.url()}`);
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The text of an element the page fills from an API answer (a secret shown once): waits until the
 * text matches, since the element itself is in the page before the answer arrives.
 */
export async function shownSecret(locator: Locator, pattern: RegExp): Promise<string> {
  await locator.filter({ hasText: pattern }).waitFor();
  return locator.innerText();
}
