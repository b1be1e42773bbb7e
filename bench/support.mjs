#!/usr/bin/env node
// Support throughput on this machine: chat messages (one durable write transaction each) and chat
// reads, against the real app on a temporary SQLite file. Build first (npm run build), then
// `node bench/support.mjs [seconds]`. Prints figures; asserts nothing.
import autocannon from 'autocannon';
import { startTestApp } from '../dist/test/helpers/app.js';

const seconds = Number(process.argv[2] ?? 5);
const t = await startTestApp({ config: { rate_limits: { public_per_ip: 0, chat_per_token: 0 }, log: { level: 'warn' } } });
try {
  const start = await t.client().post('/support/chat', { name: 'Bench', email: 'bench@example.org', message: 'hello' });
  const headers = { 'content-type': 'application/json', 'x-support-chat-token': start.body.chat_token };
  const run = (opts) => autocannon({ url: `${t.baseUrl}/api/v1${opts.path}`, connections: 10, duration: seconds, headers, ...opts });

  const write = await run({ path: '/support/chat/messages', method: 'POST', body: JSON.stringify({ message: 'x'.repeat(200) }) });
  console.log(
    `POST /support/chat/messages: ${Math.round(write.requests.average)} req/s, p50 ${write.latency.p50} ms, p99 ${write.latency.p99} ms, non-2xx ${write.non2xx}`,
  );

  // Reads of a chat that now holds every message written above.
  const n = (await t.client().get('/support/chat', { headers })).body.messages.length;
  const read = await run({ path: '/support/chat', method: 'GET' });
  console.log(`GET /support/chat (${n} messages): ${Math.round(read.requests.average)} req/s, p50 ${read.latency.p50} ms, p99 ${read.latency.p99} ms`);
} finally {
  await t.close();
}
