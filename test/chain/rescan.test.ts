/**
 * The operator's tools: `gatewayd chain status` and `gatewayd chain rescan` while serving. The
 * runbook case: a payment the only provider left out of its block answer (trusted as it answers)
 * is found by a rescan; asking twice records nothing twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { buildConfig, ConfigError } from '../../src/config.js';
import { runChainRescan, runChainStatus } from '../../src/cli/chain.js';
import { UsageError } from '../../src/cli/usage.js';
import { loadScanState } from '../../src/chain/chain.repo.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { getInvoice, insertInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { untilSolid, world } from '../helpers/hostile-provider.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { startTestApp, tempDir } from '../helpers/app.js';

test('chain rescan --from-block finds a payment the only provider left out; twice records nothing twice; chain status shows the cursor, the range and the providers', async () => {
  const w = await world(['liar']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_500_001n, expiresAt: start + 2 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_500_001n, at: start + 30 * SECOND });
    w.liar.set({ omit: new Set([p.txId]) });
    await untilSolid(w, start + 2 * MINUTE);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'expired', 'lost to the omission (one provider is trusted as it answers)');
    w.liar.set({});

    const lines: string[] = [];
    const out = (l: string) => lines.push(l);
    await assert.rejects(runChainRescan(w.t.config, {}, out), UsageError);
    await assert.rejects(runChainRescan(w.t.config, { block: 'abc' }, out), UsageError);
    for (let i = 0; i < 2; i++) {
      assert.equal(await runChainRescan(w.t.config, { block: String(p.blockNumber - 3) }, out), 0);
      await w.pass();
      await w.pass();
    }
    const rows = (await transfersOf(w.t)).filter((r) => r.tx_hash === p.txId);
    assert.equal(rows.length, 1, 'recorded once');
    // Paid within its window: the expiry was a misreading of the chain, so the invoice confirms.
    assert.equal(rows[0]!.kind, 'confirmed');
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');

    lines.length = 0;
    assert.equal(await runChainStatus({ ...w.t.config, server: { ...w.t.config.server, listen: new URL(w.t.baseUrl).host } }, out), 0);
    const text = lines.join('\n');
    const state = (await loadScanState(w.t.deps.db, w.t.config.network))!;
    assert.match(text, new RegExp(`cursor: block ${state.cursorBlock}`));
    assert.match(text, /gaps: none/);
    assert.match(text, new RegExp(`provider ${w.liar.url.replace(/\./g, '\\.')}: ok`));
    assert.match(text, /disputes: none/);
    assert.match(text, /server: http:\S+, the same instance \(network tron-mainnet, this database\)/);

    // Another instance on the address it asks (another database, or another network): said, and its providers not shown as this one's.
    const others: Array<{ tron?: { network: string; api_url: string } }> = [{}, { tron: { network: 'devnet', api_url: 'http://127.0.0.1:1' } }];
    for (const other of others) {
      // Another database, prepared at the same moment as this one (test apps start at one fixed time): its own random id.
      const elsewhere = await startTestApp({ config: other });
      try {
        lines.length = 0;
        assert.equal(await runChainStatus({ ...w.t.config, server: { ...w.t.config.server, listen: new URL(elsewhere.baseUrl).host } }, out), 0);
        const said = lines.join('\n');
        assert.match(said, new RegExp(`cursor: block ${state.cursorBlock}`), 'the database is still read');
        assert.match(
          said,
          other.tron ? /runs tron-devnet, this database is tron-mainnet: another instance/ : /uses another database than .+: another instance/,
        );
        assert.doesNotMatch(said, /^provider /m);
      } finally {
        await elsewhere.close();
      }
    }

    // A server that answers, but not with a gatewayd instance's network and database (another
    // program on the port, or a gatewayd too old to say them): never taken for this instance.
    for (const answer of [{ status: 'ok', watcher: { state: 'ok', providers: [{ name: 'p' }] } }, { status: 'ok', network: 'tron-mainnet' }, ['x']]) {
      const other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
      try {
        lines.length = 0;
        const listen = `127.0.0.1:${(other.address() as AddressInfo).port}`;
        assert.equal(await runChainStatus({ ...w.t.config, server: { ...w.t.config.server, listen } }, out), 0);
        const said = lines.join('\n');
        assert.match(said, /answers, but without the network and database of a gatewayd instance/, JSON.stringify(answer));
        assert.doesNotMatch(said, /the same instance|^provider /m);
      } finally {
        await new Promise((r) => other.close(r));
      }
    }
  } finally {
    await w.close();
  }
});

test('chain status and rescan on a database no instance has used: said, and no empty database left behind; a wrong argument is refused first', async () => {
  const dir = tempDir('gatewayd-chain-none-');
  const path = join(dir, 'data', 'gateway.db');
  const config = buildConfig({ database: { path, url: '' } });
  const out = () => undefined;
  await assert.rejects(runChainStatus(config, out), (err: Error) => err instanceof ConfigError && /holds no gatewayd database yet/.test(err.message));
  await assert.rejects(runChainRescan(config, { block: '5' }, out), ConfigError);
  assert.equal(existsSync(path), false, 'nothing created');
  await assert.rejects(
    runChainRescan(config, { block: 'abc' }, out),
    (err: Error) => err instanceof UsageError && /--from-block must be a block number/.test(err.message),
  );
  await assert.rejects(
    runChainRescan(config, { time: 'yesterday' }, out),
    (err: Error) => err instanceof UsageError && /--from-time must be an ISO 8601/.test(err.message),
  );
  // An empty file (made by hand, or by an older chain status) is no instance's database either.
  mkdirSync(join(dir, 'data'));
  writeFileSync(path, '');
  await assert.rejects(runChainStatus(config, out), ConfigError);
});

test('chain rescan --from-time reads from about that time', async () => {
  const w = await world(['node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    await insertInvoice(w.t, { address, amount: 9_500_002n, expiresAt: start + 2 * MINUTE });
    await untilSolid(w, start + MINUTE);
    const lines: string[] = [];
    assert.equal(await runChainRescan(w.t.config, { time: new Date(start + 30 * SECOND).toISOString() }, (l) => lines.push(l)), 0);
    const at = w.node.blockAt(start + 30 * SECOND).number;
    const m = /blocks (\d+)-(\d+)/.exec(lines[0]!);
    assert.ok(m, lines[0]);
    assert.ok(Number(m[1]) <= at && Number(m[1]) >= at - 40, `${m[1]} near ${at}`);
  } finally {
    await w.close();
  }
});
