import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { buildConfig } from '../../src/config.js';
import { createMailer, isLoopbackSmtpHost, startTlsRequired } from '../../src/email/mailer.js';
import { createLogger } from '../../src/lib/log.js';
import { nonLoopbackAddress, startSmtp } from '../helpers/smtp.js';
import { makeTestCa } from '../helpers/test-ca.js';

const PASSWORD = 'S3cret-smtp-pass';
const RESET = { to: 'owner@shop.example', subject: 'Reset your password', text: 'https://pay.example.com/reset#reset=secret-reset-token', kind: 'reset' };

function mailerFor(port: number, email: Record<string, unknown> = {}, host = '127.0.0.1') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const config = buildConfig({ email: { smtp_url: `smtp://mailer:${PASSWORD}@${host}:${port}`, ...email } });
  return { mailer: createMailer(config, createLogger('debug', sink)), log: () => lines.join('') };
}

const NETWORK_HOST = nonLoopbackAddress();

test(
  'STARTTLS stripped: by default the mailer sends neither the SMTP password nor the message in plain text',
  { skip: NETWORK_HOST === undefined && 'no non-loopback address' },
  async (t) => {
    // What someone on the path sees after removing STARTTLS from the server's EHLO answer: a server
    // that does not offer it and accepts AUTH and mail in plain text. On a network address: loopback
    // hosts are exempt (next test).
    const onPath = await startSmtp({ auth: true, host: NETWORK_HOST });
    t.after(() => onPath.close());
    const { mailer, log } = mailerFor(onPath.port, {}, NETWORK_HOST);
    const result = await mailer.send(RESET);
    mailer.close();
    assert.equal(result.accepted, false);
    assert.deepEqual(onPath.logins, [], 'the SMTP password was never presented');
    assert.equal(onPath.messages.length, 0, 'the reset link was never sent');
    assert.match(log(), /"mail_kind":"reset".*mail not sent/);
    assert.doesNotMatch(log(), new RegExp(`${PASSWORD}|secret-reset-token`));
  },
);

test('a relay on loopback (127.0.0.0/8, ::1, localhost) is exempt from smtp_tls = "required": plain text when STARTTLS is not offered', async (t) => {
  for (const host of ['127.0.0.1', 'localhost']) {
    const relay = await startSmtp({ auth: true });
    t.after(() => relay.close());
    const { mailer } = mailerFor(relay.port, {}, host);
    const result = await mailer.send(RESET);
    mailer.close();
    assert.equal(result.accepted, true, `${host}: ${result.error}`);
    assert.equal(relay.messages.length, 1);
  }
  for (const [host, exempt] of [
    ['127.5.6.7', true],
    ['[::1]', true],
    ['LOCALHOST', true],
    ['localhost.example.com', false],
    ['127.0.0.1.nip.io', false],
    ['10.0.0.1', false],
    ['[::ffff:7f00:1]', false],
  ] as const) {
    assert.equal(isLoopbackSmtpHost(host), exempt, host);
    assert.equal(startTlsRequired(buildConfig({ email: { smtp_url: `smtp://${host}:25` } })), !exempt, host);
  }
});

test('email.smtp_tls = "opportunistic" is the explicit opt-out for a local relay: plain text when STARTTLS is not offered', async (t) => {
  const relay = await startSmtp({ auth: true });
  t.after(() => relay.close());
  const { mailer } = mailerFor(relay.port, { smtp_tls: 'opportunistic' });
  const result = await mailer.send(RESET);
  mailer.close();
  assert.equal(result.accepted, true, result.error);
  assert.equal(relay.messages.length, 1);
  assert.equal(relay.messages[0]!.overTls, false);
  assert.deepEqual(relay.logins, [{ username: 'mailer', password: PASSWORD, overTls: false }]);
});

test('a server that offers STARTTLS with a trusted certificate gets the credentials and the message over TLS; an untrusted one gets nothing', async (t) => {
  const untrustedCa = await makeTestCa();
  const impostor = await startSmtp({ auth: true, starttls: await untrustedCa.issue({ ip: ['127.0.0.1'] }) });
  t.after(() => impostor.close());
  const first = mailerFor(impostor.port);
  assert.equal((await first.mailer.send(RESET)).accepted, false, 'a certificate from an unknown CA is refused');
  first.mailer.close();
  assert.deepEqual(impostor.logins, []);
  assert.equal(impostor.messages.length, 0);

  // The system's CAs plus a test CA, as an operator with a private CA would add it (NODE_EXTRA_CA_CERTS).
  const ca = await makeTestCa();
  setDefaultCACertificates([...getCACertificates('default'), ca.pem]);
  const server = await startSmtp({ auth: true, starttls: await ca.issue({ ip: ['127.0.0.1'] }) });
  t.after(() => server.close());
  const { mailer } = mailerFor(server.port);
  const result = await mailer.send(RESET);
  mailer.close();
  assert.equal(result.accepted, true, result.error);
  assert.equal(server.messages[0]!.overTls, true);
  assert.match(server.messages[0]!.text, /secret-reset-token/);
  assert.deepEqual(server.logins, [{ username: 'mailer', password: PASSWORD, overTls: true }]);
});
