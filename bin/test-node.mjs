#!/usr/bin/env node
// `npm run test:node -- 24 [words...]`: runs the compiled tests (npm run build first) under another
// supported Node.js line, fetched once from the npm registry into .node-<major>/ (bin/node-runtime.mjs).
// The project's own node_modules serve every line: better-sqlite3 13 and argon2 are Node-API addons,
// which load unchanged on Node 22, 24 and 26. Words select test files as in `node test/run.mjs`.
// Exit status: the test run's.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode, NODE_LINES } from './node-runtime.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const major = process.argv[2];
const words = process.argv.slice(3);
if (!major || !(major in NODE_LINES)) {
  console.error(`usage: npm run test:node -- <${Object.keys(NODE_LINES).join('|')}> [test words...]`);
  process.exit(2);
}
if (!existsSync(join(root, 'dist/test'))) {
  console.error('test-node: dist/ is missing; run `npm run build` first');
  process.exit(2);
}
let node;
try {
  node = ensureNode(major);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
console.error(`test-node: running the tests under Node ${node.version}`);
// That node first on PATH: the tests start child processes (bin/gatewayd, benchmarks) with it too.
const env = { ...process.env, PATH: `${node.bin}:${process.env.PATH}` };
const r = spawnSync(node.node, ['test/run.mjs', ...words], { cwd: root, stdio: 'inherit', env });
process.exit(r.status ?? 1);
