import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { startTestApp } from '../helpers/app.js';

// The served OpenAPI document is compared with a checked-in copy, so every contract change shows
// in review. After an intended change: `npm run openapi:update`.
const SNAPSHOT = join(projectRoot(), 'test', 'openapi.snapshot.json');

test('GET /api/v1/openapi.json is OpenAPI 3.1, version 0.2.0, and matches the checked-in copy', async () => {
  const t = await startTestApp({ config: { server: { public_url: 'https://pay.example.com' } } });
  try {
    const res = await t.client().get('/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '0.2.0');
    assert.equal(doc.servers[0].url, 'https://pay.example.com');
    assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/api/v1/')), 'paths carry the version prefix');
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        assert.ok(op.responses['500'], `${method.toUpperCase()} ${path} documents 500`);
        // Every JSON body passes the 64 KiB guard, so every operation with a body can answer 413.
        if (op.requestBody) assert.ok(op.responses['413'], `${method.toUpperCase()} ${path} documents 413`);
        for (const [status, r] of Object.entries<any>(op.responses)) {
          if (Number(status) >= 400) assert.equal(r.content['application/json'].schema.$ref, '#/components/schemas/Error', `${method} ${path} ${status}`);
        }
      }
    }
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') {
      writeFileSync(SNAPSHOT, text);
      return;
    }
    let expected = '';
    try {
      expected = readFileSync(SNAPSHOT, 'utf8');
    } catch {
      assert.fail(`missing ${SNAPSHOT}; run npm run openapi:update`);
    }
    assert.equal(text, expected, 'the API contract changed: review it, then run npm run openapi:update');
  } finally {
    await t.close();
  }
});
