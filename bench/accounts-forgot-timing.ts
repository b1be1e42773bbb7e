/**
 * Forgot-password timing: a request for an address with an account against one without. Both must
 * do the same durable work before answering (no enumeration by timing), so the two medians should
 * be equal within noise. The ceiling printed beside them is this machine's floor for the same
 * route: a request refused by validation (400), which touches no database.
 *
 * Each round uses fresh addresses (a first request for its address), then repeats one request per
 * address at once (within the 5-minute mail limit), so both the mailing and the limited paths are
 * compared. Which path goes first alternates from round to round, and each request is timed alone
 * (after the previous one's mail has been delivered).
 *
 * Run: npm run build && node dist/bench/accounts-forgot-timing.js [rounds]
 */
import { loadavg } from 'node:os';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { confirmedAccount, startMailApp, uniqueEmail } from '../test/helpers/accounts.js';

const ROUNDS = Number(process.argv[2] ?? 200);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The timing client runs in a process of its own, as an attacker's would: in the server's process
 * it would also wait for whatever the server does after answering (here, sending the mail).
 */
function clientProcess(): void {
  process.on('message', async (m: { url: string; body: unknown }) => {
    const start = performance.now();
    const res = await fetch(m.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m.body) });
    await res.text();
    process.send!({ ms: performance.now() - start, status: res.status });
  });
}

function startClient(): { time(url: string, body: unknown): Promise<{ ms: number; status: number }>; close(): void } {
  const child = fork(fileURLToPath(import.meta.url), ['--client']);
  return {
    time: (url, body) =>
      new Promise((resolve) => {
        child.once('message', resolve as (m: unknown) => void);
        child.send({ url, body });
      }),
    close: () => child.kill(),
  };
}

async function main(): Promise<void> {
  const app = await startMailApp();
  const client = startClient();
  try {
    const known: string[] = [];
    for (let i = 0; i < ROUNDS; i++) known.push((await confirmedAccount(app, uniqueEmail('bench'))).email);
    const time = async (body: unknown, status: number): Promise<number> => {
      const res = await client.time(`${app.t.baseUrl}/api/v1/auth/password/forgot`, body);
      if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
      return res.ms;
    };
    const series = { known: [] as number[], unknown: [] as number[], knownAgain: [] as number[], unknownAgain: [] as number[], floor: [] as number[] };
    // Warm-up: argon2 is not involved here, but the first requests compile the route's code paths.
    for (let i = 0; i < 20; i++) {
      await time({ email: `warm${i}@nowhere.example` }, 202);
      await time({ email: 'not an address' }, 400);
    }
    // Each request is timed alone: the mail a request causes is sent after its answer, so the next
    // request waits until that mail has arrived (and the machine is quiet again) before it starts.
    const settle = async (email: string, mailsBefore: number, expectMail: boolean) => {
      const deadline = Date.now() + 2000;
      while (expectMail && Date.now() < deadline && !app.smtp.messages.slice(mailsBefore).some((m) => m.to.includes(email))) await sleep(2);
      // Then until no mail has arrived for 20 ms (an unexpected one would be counted below).
      let seen = -1;
      while (seen !== app.smtp.messages.length) {
        seen = app.smtp.messages.length;
        await sleep(20);
      }
    };
    for (let i = 0; i < ROUNDS; i++) {
      const unknown = `nobody${i}.${process.pid}@nowhere.example`;
      // Alternate which path goes first, so that drift in the machine's load affects both alike.
      const order: Array<['known' | 'unknown', string]> =
        i % 2 === 0
          ? [
              ['known', known[i]!],
              ['unknown', unknown],
            ]
          : [
              ['unknown', unknown],
              ['known', known[i]!],
            ];
      for (const again of [false, true]) {
        for (const [kind, email] of order) {
          const mails = app.smtp.messages.length;
          const ms = await time({ email }, 202);
          series[again ? (kind === 'known' ? 'knownAgain' : 'unknownAgain') : kind].push(ms);
          await settle(email, mails, kind === 'known' && !again);
        }
      }
      series.floor.push(await time({ email: 'not an address' }, 400));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
    const row = (label: string, xs: number[]) =>
      console.log(`${label.padEnd(44)} median ${median(xs).toFixed(2)} ms  p90 ${p90(xs).toFixed(2)} ms  (n=${xs.length})`);
    console.log(`forgot-password timing, ${ROUNDS} rounds, load ${loadavg()[0]!.toFixed(2)}`);
    row('existing account, first request', series.known);
    row('no account, first request', series.unknown);
    row('existing account, again within 5 minutes', series.knownAgain);
    row('no account, again within 5 minutes', series.unknownAgain);
    row('ceiling: same route refused by validation', series.floor);
    const diff = median(series.known) - median(series.unknown);
    console.log(`difference of the first-request medians (existing - none): ${diff.toFixed(2)} ms`);
    const mails = app.smtp.messages.filter((m) => m.subject === 'Reset your password').length;
    console.log(`reset mails accepted by the SMTP server: ${mails} (one per existing address expected)`);
  } finally {
    client.close();
    await app.close();
  }
}

if (process.argv.includes('--client')) clientProcess();
else await main();
