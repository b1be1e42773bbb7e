import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';

const XSS = '<img src=x onerror=alert(1)><script>alert(2)</script>';

test('support in Chromium: owner opens a ticket, staff answers it from the inbox, owner closes it; a visitor chats', async (t) => {
  const app = await startBrowserApp({ config: { support: { staff_emails: ['staff@example.test'] } } });
  t.after(() => app.close());
  const owner = await signedInMerchant(app, { name: 'Owner Shop', email: 'owner@example.test' });
  const staff = await signedInMerchant(app, { name: 'Staff', email: 'staff@example.test' });
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const signInAs = async (client: typeof owner.client | null) => {
    await context.clearCookies();
    if (client) await context.addCookies([{ name: SESSION_COOKIE, value: client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  };

  // The owner opens a ticket.
  await signInAs(owner.client);
  await page.goto(`${app.baseUrl}/console/support`);
  await page.getByLabel('Subject').fill(`Payout ${XSS}`);
  await page.getByLabel('Topic').selectOption('payments');
  await page.getByLabel('Message').fill(`Hello ${XSS}`);
  await page.getByRole('button', { name: 'Send to support' }).click();
  await page.waitForURL(/\/console\/support\/tkt_/);
  assert.equal(await page.locator('h1').innerText(), `Payout ${XSS}`);
  assert.equal(await page.locator('.thread .body').first().innerText(), `Hello ${XSS}`);
  const ticketPath = new URL(page.url()).pathname;

  // Staff see it in the inbox with the contact details and answer.
  await signInAs(staff.client);
  await page.goto(`${app.baseUrl}/console/inbox`);
  await page.getByRole('link', { name: `Payout ${XSS}` }).click();
  await page.waitForURL(/\/console\/inbox\/tkt_/);
  assert.match(await page.locator('.facts').innerText(), /owner@example\.test/);
  await page.getByLabel('Your reply').fill('We are on it <b>now</b>');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.locator('.thread li.staff').waitFor();
  assert.equal(await page.locator('.thread li.staff .body').innerText(), 'We are on it <b>now</b>');
  assert.equal(await page.locator('h1 + p .badge').innerText(), 'Answered');

  // The owner reads the answer and closes the ticket; a non-staff owner has no inbox.
  await signInAs(owner.client);
  await page.goto(`${app.baseUrl}${ticketPath}`);
  assert.equal(await page.locator('.thread li.staff .body').innerText(), 'We are on it <b>now</b>');
  await page.getByRole('button', { name: 'Close ticket' }).click();
  await page.locator('h1 + p .badge.closed').waitFor();
  assert.equal((await page.goto(`${app.baseUrl}/console/inbox`))?.status(), 404);
  browser.errors.length = 0; // that 404 was expected

  // A visitor starts a chat; the token stays in this browser across reloads; staff replies show up.
  await signInAs(null);
  await page.goto(`${app.baseUrl}/support/contact`);
  await page.getByRole('button', { name: 'Chat with us' }).click();
  await page.locator('#chat-name').fill(`Visitor ${XSS}`);
  await page.locator('#chat-email').fill('visitor@example.test');
  await page.locator('#chat-message').fill(`Is USDT on TRON accepted? ${XSS}`);
  await page.getByRole('button', { name: 'Start chat' }).click();
  await page.locator('#chat .thread li').first().waitFor();
  assert.equal(await page.locator('#chat .thread li .body').first().innerText(), `Is USDT on TRON accepted? ${XSS}`);
  assert.match(await page.locator('#chat .thread li strong').first().innerText(), /^Visitor <img/);
  const token = await page.evaluate('localStorage.getItem("gatewayd.chat_token")');
  assert.equal(typeof token, 'string');
  const inbox = await staff.client.get('/support/inbox');
  const chat = (inbox.body.tickets as Array<{ id: string; source: string }>).find((k) => k.source === 'chat')!;
  assert.equal((await staff.client.post(`/support/inbox/${chat.id}/messages`, { message: 'Yes, it is.' })).status, 201);
  await page.reload();
  await page.getByRole('button', { name: 'Chat with us' }).click();
  await page.locator('#chat .thread li.staff').waitFor();
  assert.equal(await page.locator('#chat .thread li.staff .body').innerText(), 'Yes, it is.');
  // Its time in the one date format of every page, never the browser's local one.
  assert.match(await page.locator('#chat .thread li.staff time').innerText(), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  await page.locator('#chat-reply').fill('Thanks!');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.locator('#chat .thread li').nth(2).waitFor();
  await page.getByRole('button', { name: 'Close' }).click();

  // The contact form answers with the ticket reference only.
  await page.locator('#c-name').fill('Vera');
  await page.locator('#c-email').fill('vera@example.test');
  await page.locator('#c-subject').fill(`Question ${XSS}`);
  await page.locator('#c-message').fill('Do you invoice in EUR?');
  await page.getByRole('button', { name: 'Send message' }).click();
  await page.locator('[data-done]').first().waitFor();
  assert.match(await page.locator('[data-field="ticket.reference"]').innerText(), /^SUP-[A-Z0-9]{10}$/);

  assert.deepEqual(dialogs, [], 'no typed script ran');
  assert.deepEqual(browser.errors, [], 'no console errors');
});
