/**
 * Page rendering figures (`npm run bench:pages`): requests per second and latency of the checkout
 * page (invoice read + QR SVG + template), the sign-in page (template only) and the console
 * overview (several reads), each for 5 s with 10 concurrent keep-alive clients. Printed, never asserted.
 */

/** A small closed-loop load generator: `connections` clients, each sending its next request on answer. */
async function load(url: string, headers: Record<string, string>, connections: number, seconds: number) {
  const latencies: number[] = [];
  let failures = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) failures += 1;
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  return { rps: Math.round(latencies.length / seconds), p50: at(0.5), p99: at(0.99), failures };
}
import { startTestApp } from '../test/helpers/app.js';
import { signedInMerchant } from '../test/helpers/fixtures.js';
import { insertInvoice, insertWallet } from '../test/pages/rows.js';

const t = await startTestApp({ config: { log: { level: 'warn' } } });
const { merchant, client } = await signedInMerchant(t);
const walletId = await insertWallet(t.deps.db, merchant.id, t.clock.now());
for (let i = 0; i < 50; i++) await insertInvoice(t.deps.db, { merchantId: merchant.id, walletId, now: t.clock.now() - i * 60_000, adjustment: BigInt(i + 1) });
const inv = await insertInvoice(t.deps.db, { merchantId: merchant.id, walletId, now: t.clock.now(), adjustment: 999n });
const cookie = `gw_session=${client.cookies.get('gw_session')}`;

const cases: Array<[string, string, Record<string, string>]> = [
  ['checkout /pay/{token}', `/pay/${inv.checkoutToken}`, {}],
  ['sign-in /login', '/login', {}],
  ['console overview /console', '/console', { cookie }],
];
try {
  for (const [name, path, headers] of cases) {
    const r = await load(`${t.baseUrl}${path}`, headers, 10, 5);
    console.log(`${name.padEnd(28)} ${r.rps} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  non-200 ${r.failures}`);
  }
} finally {
  await t.close();
}
