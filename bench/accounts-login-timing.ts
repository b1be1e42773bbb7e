/**
 * Sign-in timing: a wrong password for a confirmed account, an unknown email, and an unconfirmed
 * address with 1 and with 5 live registrations. Every case must cost one argon2id, so the medians
 * should be close to each other and to one bare argon2id hash, measured in the same run (the
 * machine's ceiling): the time tells neither whether an account exists nor how many registrations
 * compete for an address.
 * Run: npm run build && node dist/bench/accounts-login-timing.js
 */
import { hashPassword } from '../src/accounts/passwords.js';
import { confirmedAccount, PASSWORD, startMailApp, uniqueEmail } from '../test/helpers/accounts.js';

const ROUNDS = 30;

async function main(): Promise<void> {
  const app = await startMailApp();
  try {
    const { email } = await confirmedAccount(app);
    const oneRegistration = uniqueEmail('one');
    const fiveRegistrations = uniqueEmail('five');
    assert201(await app.t.client().post('/auth/register', { email: oneRegistration, password: PASSWORD }));
    for (let i = 0; i < 5; i++) assert201(await app.t.client().post('/auth/register', { email: fiveRegistrations, password: `${PASSWORD} ${i}` }));
    const c = app.t.client();
    const time = async (body: unknown): Promise<number> => {
      const start = performance.now();
      const res = await c.post('/auth/login', body);
      if (res.status !== 401) throw new Error(`expected 401, got ${res.status}`);
      return performance.now() - start;
    };
    const cases = {
      'wrong password, confirmed account   ': (i: number) => time({ email, password: `wrong password ${i}` }),
      'unknown email                       ': (i: number) => time({ email: `nobody${i}@nowhere.example`, password: `wrong password ${i}` }),
      'unconfirmed address, 1 registration ': (i: number) => time({ email: oneRegistration, password: `wrong password ${i}` }),
      'unconfirmed address, 5 registrations': (i: number) => time({ email: fiveRegistrations, password: `wrong password ${i}` }),
      'one bare argon2id hash (ceiling)    ': async () => {
        const start = performance.now();
        await hashPassword('wrong password here');
        return performance.now() - start;
      },
    };
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]]));
    for (let i = 0; i < ROUNDS; i++) for (const [name, run] of Object.entries(cases)) samples[name]!.push(await run(i));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [name, xs] of Object.entries(samples)) console.log(`sign-in timing: ${name}  median ${median(xs).toFixed(1)} ms over ${ROUNDS}`);
  } finally {
    await app.close();
  }
}

function assert201(res: { status: number; text: string }): void {
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${res.text}`);
}

await main();
