import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/app.js';
import { runCli, writeConfig } from '../helpers/process.js';

// A webhook setting that cannot work stops `serve` at start (exit 2, naming the key), instead of
// failing every delivery later.
const CASES: Array<[Record<string, unknown>, RegExp]> = [
  [{ allow_private_cidrs: ['10.0.0.0/33'] }, /webhooks\.allow_private_cidrs: "10\.0\.0\.0\/33" is not a CIDR range/],
  [{ resolve: { 'hooks.example.test': 'not-an-ip' } }, /webhooks\.resolve: "hooks\.example\.test" must map to an IPv4 or IPv6 address/],
  [{ ca_file: 'missing-ca.pem' }, /webhooks\.ca_file: cannot read .*missing-ca\.pem \(ENOENT\)/],
  [{ ca_file: 'garbage.pem' }, /webhooks\.ca_file: .*garbage\.pem is not a PEM certificate bundle/],
];

test('serve refuses unusable [webhooks] settings with exit 2 and the key at fault', () => {
  for (const [webhooks, message] of CASES) {
    const dir = tempDir('gatewayd-whcfg-');
    try {
      writeFileSync(join(dir, 'garbage.pem'), '-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n');
      const path = writeConfig(dir, { server: { listen: '127.0.0.1:0' }, database: { path: join(dir, 'gateway.db') }, webhooks });
      const r = runCli(['serve', '--config', path]);
      assert.equal(r.status, 2, `${JSON.stringify(webhooks)}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
