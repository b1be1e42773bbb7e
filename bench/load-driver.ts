/**
 * The load generator process: autocannon's programmatic API (the CLI's argument parser mangles a
 * body holding `[<id>]`). `node dist/bench/load-driver.js '<options as JSON>'`; prints autocannon's
 * result as JSON.
 */
import { createRequire } from 'node:module';

type Run = (opts: Record<string, unknown>, cb: (err: Error | null, result: unknown) => void) => void;
const run = createRequire(import.meta.url)('autocannon') as Run;
const opts = JSON.parse(process.argv[2]!) as Record<string, unknown>;
run(opts, (err, result) => {
  if (err) {
    console.error(err);
    process.exitCode = 1;
    return;
  }
  console.log(JSON.stringify(result));
});
