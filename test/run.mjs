#!/usr/bin/env node
// Runs the compiled node:test files (dist/test/**/*.test.js), optionally only those whose path
// contains one of the given words: `node test/run.mjs config migrations`. Ends with node:test's summary.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = 'dist/test';
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    // Only compiled tests whose source still exists: tsc never deletes the output of a removed or
    // moved test file, and a stale copy would run against today's code.
    else if (name.endsWith('.test.js') && existsSync(path.slice('dist/'.length).replace(/\.js$/, '.ts'))) files.push(path);
  }
})(root);
const filters = process.argv.slice(2);
const selected = files.filter((f) => filters.length === 0 || filters.some((w) => f.includes(w))).sort();
if (selected.length === 0) {
  console.error(`no test files matched ${filters.join(' ')}`);
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...selected], { stdio: 'inherit' });
process.exit(r.status ?? 1);
