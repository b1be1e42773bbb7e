/**
 * Slow and faulty peers (issue 11) around the real `gatewayd serve`: a TronGrid stand-in that
 * throttles, errs, hangs and lies (the attacks of docs/payments.md) while real payments
 * also arrive, a webhook receiver that hangs, an SMTP server that refuses. The service keeps
 * answering, confirms exactly the real payments and loses nothing.
 */
import { test } from 'node:test';
import { startGateway } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { startSmtp } from '../helpers/smtp.js';
import { startTronGrid, type Endpoint, type Fault } from '../helpers/trongrid.js';
import { APPROVAL_TOPIC, FAKE_USDT_CONTRACTS, LOOKALIKE_PAYER, SAMPLE_PAYER, successReceipt, transferLog, type ReceiptLog } from '../helpers/tron-samples.js';
import { HttpClient } from '../helpers/http.js';
import { checkNoUnhandledErrors, prepareDatabase, type PreparedMerchant, reader, rng, sessionClient, size, sleep, Tally, teardown } from './harness.js';

function micro(text: string): bigint {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/** One lie per kind: each reaches the watcher as block contents in real shapes and must confirm nothing. */
type Lie = (tg: Awaited<ReturnType<typeof startTronGrid>>, to: string, amount: bigint, at: number) => void;
/** A hand-made TransactionInfo with these logs (successful unless `extra` says otherwise). */
function inject(tg: Awaited<ReturnType<typeof startTronGrid>>, at: number, logs: ReceiptLog[], extra: Record<string, unknown> = {}): void {
  const { id: _id, blockNumber: _n, blockTimeStamp: _t, ...info } = successReceipt({ txId: 'x', blockTimestamp: at, logs });
  tg.injectInfo({ at, info: { ...info, ...extra } });
}
const LIES: Record<string, Lie> = {
  fake_token: (tg, to, amount, at) => void tg.pay({ to, amount, blockTimestamp: at, contract: FAKE_USDT_CONTRACTS[0]! }),
  failed_receipt: (tg, to, amount, at) => void tg.pay({ to, amount, blockTimestamp: at, receipt: 'failed' }),
  reverted_with_log: (tg, to, amount, at) =>
    inject(tg, at, [transferLog({ from: SAMPLE_PAYER, to, amount })], { receipt: { result: 'REVERT' }, result: 'FAILED' }),
  fake_log_in_usdt_call: (tg, to, amount, at) => inject(tg, at, [transferLog({ from: SAMPLE_PAYER, to, amount, contract: FAKE_USDT_CONTRACTS[1]! })]),
  approval_log: (tg, to, amount, at) => inject(tg, at, [transferLog({ from: SAMPLE_PAYER, to, amount, topic: APPROVAL_TOPIC })]),
  lookalike_recipient: (tg, _to, amount, at) => void tg.pay({ to: LOOKALIKE_PAYER, amount, blockTimestamp: at }),
  wrong_amount: (tg, to, amount, at) => void tg.pay({ to, amount: amount + 1n, blockTimestamp: at }),
  zero_value_lookalike: (tg, to, _amount, at) => void tg.pay({ to, amount: 0n, from: LOOKALIKE_PAYER, blockTimestamp: at }),
  before_creation: (tg, to, amount, at) => void tg.pay({ to, amount, blockTimestamp: at - 3_600_000 }),
};

const FAULTS: Array<[Endpoint, Fault]> = [
  ['blockinfo', { status: 429, body: { Error: 'request rate exceeded the allowed_rps(15), and the query server is suspended for 1s' } }],
  ['blockinfo', { status: 500, body: 'Internal Server Error' }],
  ['blockinfo', { status: 503 }],
  ['blockinfo', { raw: '<html><body>Bad gateway</body></html>' }],
  ['blockinfo', { raw: '[{"id":"0130dfde9281a48378' }],
  ['blockinfo', { status: 200, body: { data: 'not a list', success: true } }],
  // (An altered block is not among them: a single provider is trusted as it answers; the
  // cross-check on a second provider has its own test, test/chain/watcher.test.ts.)
  ['blockinfo', { raw: 'null' }],
  ['nowblock', { status: 502 }],
  ['nowblock', { raw: '{}' }],
];

test('slow and faulty peers: a lying, throttling TronGrid, a hanging receiver, a refusing SMTP server', { timeout: 600_000 }, async () => {
  const tally = new Tally('peers');
  const random = rng();
  // Blocks every 3 s solidified one block later, so a payment put at gateway time + 1 s is final
  // within seconds (see crash.test.ts).
  const tg = await startTronGrid({ solidityLag: 1 });
  const rx = await startHttpsReceiver();
  rx.answer((req) => (req.path.startsWith('/hang') ? 'hang' : 200));
  const smtp = await startSmtp();
  smtp.reject('rcpt');
  const prepared = await prepareDatabase(2, { addresses: ['TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx'] });
  const [a, b] = prepared.merchants as [PreparedMerchant, PreparedMerchant];
  const gw = await startGateway({
    dir: prepared.dir,
    config: {
      database: { path: prepared.dbPath },
      tron: { api_url: tg.url, poll_interval_seconds: 1 },
      webhooks: rx.webhookConfig({ timeout_seconds: 2 }),
      email: smtp.email,
      rate_limits: { auth_per_ip: 0, auth_per_email: 0 },
      log: { level: 'warn' },
    },
  });
  const db = reader(prepared.dbPath);
  const anon = new HttpClient(gw.baseUrl, null);
  try {
    const hookA = (await sessionClient(gw.baseUrl, a).post('/webhooks', { url: rx.url('/hang/a') })).body.webhook;
    const hookB = (await sessionClient(gw.baseUrl, b).post('/webhooks', { url: rx.url('/ok/b') })).body.webhook;
    tally.requests += 2;
    tally.check(Boolean(hookA?.id && hookB?.id), 'webhooks registered');

    // Invoices with distinct base prices (no lie can hit a neighbour's amount by accident).
    const rounds = size(2, 6);
    const real = new Map<string, string>();
    const lied = new Map<string, string>();
    let price = 10;
    for (let r = 0; r < rounds; r++) {
      for (const m of [a, b]) {
        for (const kind of ['real', ...Object.keys(LIES)]) {
          price += 1;
          const key = `${m.id}-${r}-${kind}`;
          const res = await anon.post(
            '/invoices',
            { merchant_order_id: key, amount: `${price}`, wallet_id: m.walletId, expires_in_minutes: 60 },
            { bearer: m.key, headers: { 'idempotency-key': key } },
          );
          tally.requests += 1;
          if (!tally.check(res.status === 201, `create ${key}: ${res.status} ${res.text.slice(0, 120)}`)) continue;
          const inv = res.body.invoice;
          const at = Date.now() + 1000;
          if (kind === 'real') {
            const { txId } = tg.pay({ to: inv.wallet_address, amount: micro(inv.payable_amount), blockTimestamp: at });
            real.set(inv.id, txId);
          } else {
            LIES[kind]!(tg, inv.wallet_address, micro(inv.payable_amount), at);
            lied.set(inv.id, kind);
            tally.faults += 1;
          }
        }
      }
    }

    // Faults while the service is probed: every probe must answer, quickly.
    const faultPhaseMs = size(6_000, 20_000);
    const until = Date.now() + faultPhaseMs;
    let slowest = 0;
    const prober = (async () => {
      while (Date.now() < until) {
        for (const [path, opts] of [
          ['/health', {}],
          ['/invoices', { bearer: a.key }],
          [`/invoices/${[...real.keys()][0]}`, { bearer: a.key }],
        ] as const) {
          const started = Date.now();
          const res = await anon.get(path, opts).catch((err: unknown) => ({ status: 0, text: String(err) }));
          slowest = Math.max(slowest, Date.now() - started);
          tally.requests += 1;
          tally.check(res.status === 200 || (path !== '/health' && res.status === 404), `${path} during faults: ${res.status} ${res.text.slice(0, 120)}`);
        }
        await sleep(100);
      }
    })();
    // Mail refused at the SMTP server: registration still answers (email_sent false), forgot 202.
    const reg = await anon.post('/auth/register', { email: 'new.owner@example.test', password: 'correct horse battery' });
    tally.requests += 1;
    tally.check(reg.status === 201 && reg.body.email_sent === false, `register with a refusing SMTP server: ${reg.status} ${reg.text.slice(0, 160)}`);
    const forgot = await anon.post('/auth/password/forgot', { email: a.email });
    tally.requests += 1;
    tally.check(forgot.status === 202, `forgot with a refusing SMTP server: ${forgot.status} ${forgot.text.slice(0, 160)}`);
    tally.faults += 2;
    let hangs = 0;
    while (Date.now() < until) {
      const [endpoint, fault] = FAULTS[Math.floor(random() * FAULTS.length)]!;
      tg.fail(endpoint, fault, 1 + Math.floor(random() * 3));
      tally.faults += 1;
      if (hangs < 1 && random() < 0.1) {
        tg.fail('blockinfo', { hang: true });
        hangs += 1;
        tally.faults += 1;
      }
      await sleep(400);
    }
    await prober;
    tg.clearFaults();
    tally.count('slowest_probe_ms', slowest);
    tally.check(slowest < 3000, `a probe took ${slowest} ms during the faults`);

    // Then: exactly the real payments confirm, once each, by their own transaction.
    const deadline = Date.now() + 90_000;
    const status = db.prepare('SELECT status, tx_hash FROM invoices WHERE id = ?');
    while (Date.now() < deadline && [...real.keys()].some((id) => (status.get(id) as { status: string }).status !== 'confirmed')) await sleep(200);
    for (const [id, tx] of real) {
      const row = status.get(id) as { status: string; tx_hash: string | null };
      tally.check(row.status === 'confirmed' && row.tx_hash === tx, `real payment ${id}: ${row.status} ${row.tx_hash}`);
    }
    await sleep(2000); // a few more passes over the lies
    for (const [id, kind] of lied) {
      const row = status.get(id) as { status: string; tx_hash: string | null };
      tally.check(row.status === 'pending' && row.tx_hash === null, `lie ${kind} moved ${id} to ${row.status} ${row.tx_hash}`);
    }
    const confirmedEvents = db.prepare("SELECT invoice_id, COUNT(*) AS n FROM events WHERE type = 'invoice.confirmed' GROUP BY invoice_id").all() as Array<{
      invoice_id: string;
      n: number;
    }>;
    tally.check(
      confirmedEvents.length === real.size && confirmedEvents.every((e) => e.n === 1 && real.has(e.invoice_id)),
      `invoice.confirmed events: ${JSON.stringify(confirmedEvents.slice(0, 5))}`,
    );
    const transfers = db.prepare('SELECT tx_hash, COUNT(*) AS n FROM chain_transfers GROUP BY tx_hash, log_index HAVING n > 1').all();
    tally.check(transfers.length === 0, 'a transfer recorded twice');

    // The healthy receiver got every event of B; A's hanging receiver left nothing in `sending`.
    const undelivered = await (async () => {
      const end = Date.now() + 30_000;
      for (;;) {
        const got = new Set(rx.requests.filter((q) => q.path.startsWith('/ok')).map((q) => String(q.headers['x-gateway-event-id'])));
        const missing = (db.prepare('SELECT id FROM events WHERE merchant_id = ?').all(b.id) as Array<{ id: string }>).filter((e) => !got.has(e.id));
        if (missing.length === 0 || Date.now() > end) return missing;
        await sleep(200);
      }
    })();
    tally.check(undelivered.length === 0, `B's events not received: ${undelivered.length}`);
    await sleep(2500);
    const aStates = db.prepare('SELECT status, COUNT(*) AS n FROM deliveries WHERE webhook_id = ? GROUP BY status').all(hookA.id) as Array<{
      status: string;
      n: number;
    }>;
    tally.check(!aStates.some((s) => s.status === 'delivered'), `A's hanging receiver: ${JSON.stringify(aStates)}`);
    const sendingTooLong = db
      .prepare("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = ? AND status = 'sending' AND updated_at < ?")
      .get(hookA.id, Date.now() - 5000) as { n: number };
    tally.check(sendingTooLong.n === 0, `${sendingTooLong.n} deliveries to the hanging receiver stuck in sending`);
    const health = await anon.get('/health');
    tally.requests += 1;
    tally.check(health.status === 200, `health after the faults: ${health.status}`);
    tally.count('real_payments', real.size);
    tally.count('lies', lied.size);
    checkNoUnhandledErrors(tally, gw.output());
  } finally {
    await teardown({ dir: prepared.dir, db, gw, servers: [rx, tg, smtp] });
  }
  tally.finish();
});
