/**
 * The HTTP ceiling for figure 1: a bare hono + @hono/node-server app that reads a JSON body and
 * answers 201 with a JSON body of the size gatewayd's invoice answer has. No auth, no database.
 * `node dist/bench/ceiling-hono.js PORT RESPONSE_BYTES`; prints "listening" once ready.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const port = Number(process.argv[2]);
const size = Number(process.argv[3] ?? 900);
const app = new Hono();
app.post('/api/v1/invoices', async (c) => {
  const body = await c.req.json<{ merchant_order_id?: string }>();
  return c.json({ invoice: { merchant_order_id: body.merchant_order_id, padding: 'x'.repeat(Math.max(0, size - 60)) }, idempotent_replay: false }, 201);
});
serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => console.log('listening'));
