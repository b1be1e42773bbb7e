/**
 * Sign-in timing: a wrong password for a real account against an unknown email. Both must cost one
 * argon2id verification, so the two medians should be close (no enumeration by timing).
 * Run: npm run build && node dist/bench/accounts-login-timing.js
 */
import { confirmedAccount, startMailApp } from '../test/helpers/accounts.js';

const ROUNDS = 30;

async function main(): Promise<void> {
  const app = await startMailApp();
  try {
    const { email } = await confirmedAccount(app);
    const c = app.t.client();
    const time = async (body: unknown): Promise<number> => {
      const start = performance.now();
      const res = await c.post('/auth/login', body);
      if (res.status !== 401) throw new Error(`expected 401, got ${res.status}`);
      return performance.now() - start;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      known.push(await time({ email, password: 'wrong password here' }));
      unknown.push(await time({ email: `nobody${i}@nowhere.example`, password: 'wrong password here' }));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`sign-in, wrong password (known email): median ${median(known).toFixed(1)} ms over ${ROUNDS}`);
    console.log(`sign-in, unknown email:                median ${median(unknown).toFixed(1)} ms over ${ROUNDS}`);
  } finally {
    await app.close();
  }
}

await main();
