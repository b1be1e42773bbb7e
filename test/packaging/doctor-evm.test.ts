/**
 * `gatewayd doctor` on the EVM networks of [[evm.networks]]: per provider the chain id, the block
 * the finality rule names and a one-block eth_getLogs, against good providers (the simulated
 * devnets and anvil, a real node) and loopback stand-ins of the field's failures: another chain,
 * public BSC nodes' "limit exceeded" and 403, no `finalized`, a 429 with Retry-After; a provider's
 * key (in its URL's path, query or user) is never printed; one provider on a real network is a
 * warning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { checkEvmNetworks, withoutUrlSecrets } from '../../src/cli/doctor-evm.js';
import { runDoctor, type Finding } from '../../src/cli/doctor.js';
import { TRANSFER_TOPIC } from '../../src/chains/evm/reader.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { startSimulatedEvm, type SimulatedEvm } from '../../src/devnet/evm-node.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { ManualClock } from '../../src/lib/clock.js';
import { NETWORKS as TRON_NETWORKS } from '../../src/lib/tron.js';
import { startHostileRpc, type HostileRpc } from '../chains/evm/hostile-rpc.js';
import { anvilSkip } from '../chains/evm/anvil.js';
import { ALICE, startDevChain } from '../chains/evm/devchain.js';
import { tempDir } from '../helpers/app.js';
import { cleanEnv, freePort, GATEWAYD_BIN, runCli } from '../helpers/process.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

async function simulator(t: { after(fn: () => unknown): void }): Promise<SimulatedEvm> {
  const clock = new ManualClock(T0);
  const node = await startSimulatedEvm({ networks: [NETWORKS['bsc-devnet'], NETWORKS['ethereum-devnet']], now: () => clock.now(), finalityLag: 8, seed: 3 });
  t.after(() => node.close());
  return node;
}

async function hostile(t: { after(fn: () => unknown): void }, upstream: string): Promise<HostileRpc> {
  const proxy = await startHostileRpc(upstream);
  t.after(() => proxy.close());
  return proxy;
}

interface Entry {
  id: string;
  urls: string[];
  finality?: string | number;
}

function toml(entries: Entry[], tron = 'devnet', tronUrl = 'http://127.0.0.1:9'): string {
  const networks = entries.map(
    (e) =>
      `[[evm.networks]]\nid = "${e.id}"\n${e.finality === undefined ? '' : `finality = ${JSON.stringify(e.finality)}\n`}` +
      `providers = [${e.urls.map((u) => `{ url = "${u}", timeout_seconds = 3 }`).join(', ')}]\n`,
  );
  return `[server]\nsecret = "0123456789abcdef0123456789abcdef-long-enough"\n[tron]\nnetwork = "${tron}"\napi_url = "${tronUrl}"\n${networks.join('')}`;
}

async function evmDoctor(entries: Entry[], tron = 'devnet', timeoutMs = 5000): Promise<{ findings: Finding[]; text: string }> {
  const path = join(tempDir('gatewayd-doctor-evm-'), 'gatewayd.toml');
  writeFileSync(path, toml(entries, tron), { mode: 0o600 });
  const findings = await checkEvmNetworks(loadConfig({ path, env: {} }), timeoutMs);
  return { findings, text: findings.map((f) => `${f.level} ${f.check} ${f.detail}`).join('\n') };
}

const find = (findings: Finding[], level: string, check: string, about: string) =>
  findings.find((f) => f.level === level && f.check === check && f.detail.startsWith(about))?.detail ?? '';

test('doctor: the simulated devnets are good providers: chain id, finalized block behind the latest, eth_getLogs served', async (t) => {
  const sim = await simulator(t);
  const r = await evmDoctor([
    { id: 'bsc-devnet', urls: [sim.urlOf('bsc-devnet')] },
    { id: 'ethereum-devnet', urls: [sim.urlOf('ethereum-devnet')], finality: 'safe' },
  ]);
  assert.deepEqual(
    r.findings.map((f) => `${f.level} ${f.check}`),
    ['ok evm chain', 'ok evm final', 'ok evm logs', 'ok evm chain', 'ok evm final', 'ok evm logs'],
    r.text,
  );
  const bsc = sim.chain('bsc-devnet')!;
  const host = new URL(sim.url).host;
  assert.equal(find(r.findings, 'ok', 'evm chain', 'bsc-devnet'), `bsc-devnet, ${host}: chain id 900056`);
  assert.equal(
    find(r.findings, 'ok', 'evm final', 'bsc-devnet'),
    `bsc-devnet, ${host}: finalized block ${bsc.finalized()}, 8 behind the latest (${bsc.latest()})`,
  );
  assert.match(find(r.findings, 'ok', 'evm final', 'ethereum-devnet'), /: safe block \d+, 4 behind the latest/);
  assert.match(
    find(r.findings, 'ok', 'evm logs', 'bsc-devnet'),
    new RegExp(`eth_getLogs served for block ${bsc.finalized()} \\(\\d+ Transfer log\\(s\\) of USDT and USDC\\)`),
  );
  assert.doesNotMatch(r.text, /evm trust/, 'a test network needs no second provider');
});

test('doctor: anvil, a real node, is a good provider; the probe finds the Transfer log in the finalized block', { skip: anvilSkip() }, async (t) => {
  const chain = await startDevChain('ethereum-devnet');
  t.after(() => chain.close());
  const paid = await chain.pay(NETWORKS['ethereum-devnet'].tokens[0]!.contract, [ALICE, 5_000_000n]);
  await chain.mine(4); // anvil finalizes 4 behind the latest here
  const r = await evmDoctor([{ id: 'ethereum-devnet', urls: [chain.anvil.url] }]);
  assert.equal(r.findings.filter((f) => f.level !== 'ok').length, 0, r.text);
  assert.match(find(r.findings, 'ok', 'evm final', 'ethereum-devnet'), new RegExp(`finalized block ${paid.blockNumber}, 4 behind the latest`));
  assert.match(find(r.findings, 'ok', 'evm logs', 'ethereum-devnet'), new RegExp(`block ${paid.blockNumber} \\(1 Transfer log\\(s\\) of USDT and USDC\\)`));
});

test('doctor: a provider of another chain is a problem naming both chain ids and the network it is', async (t) => {
  const sim = await simulator(t);
  const unknown = await hostile(t, sim.urlOf('bsc-devnet'));
  unknown.set({ result: (call, result) => (call.method === 'eth_chainId' ? '0x7a69' : result) });
  const r = await evmDoctor([{ id: 'ethereum-devnet', urls: [sim.urlOf('bsc-devnet'), unknown.url] }]);
  assert.deepEqual(
    r.findings.map((f) => `${f.level} ${f.check}`),
    ['fail evm chain', 'fail evm chain'],
    'nothing more is asked of a provider of another chain',
  );
  assert.match(
    r.findings[0]!.detail,
    /^ethereum-devnet, 127\.0\.0\.1:\d+: serves chain id 900056 \(bsc-devnet\), not ethereum-devnet \(chain id 900001\): fix this provider's url or the network's id$/,
  );
  assert.match(r.findings[1]!.detail, /serves chain id 31337 \(no network gatewayd knows\), not ethereum-devnet \(chain id 900001\)/);
});

test('doctor: eth_getLogs refused as public BSC nodes refuse it (-32005 limit exceeded, -32701, 403) is a problem with the fix', async (t) => {
  const sim = await simulator(t);
  const limit = await hostile(t, sim.urlOf('bsc-devnet'));
  limit.set({ refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: 'limit exceeded' } : undefined) });
  const address = await hostile(t, sim.urlOf('bsc-devnet'));
  address.set({
    refuse: (call) =>
      call.method === 'eth_getLogs'
        ? {
            code: -32701,
            message:
              'Please specify an address in your request or, to remove restrictions, order a dedicated full node here: https://www.allnodes.com/bnb/host',
          }
        : undefined,
  });
  sim.fail('bsc-devnet', 'eth_getLogs', { status: 403, body: '<html><body>403 Forbidden</body></html>', headers: { 'content-type': 'text/html' } });
  const r = await evmDoctor([{ id: 'bsc-devnet', urls: [limit.url, address.url, sim.urlOf('bsc-devnet')] }]);
  const refusals = r.findings.filter((f) => f.check === 'evm logs');
  assert.deepEqual(
    refusals.map((f) => f.level),
    ['fail', 'fail', 'fail'],
    r.text,
  );
  const fix = 'the watcher finds every payment with it; use a provider that serves eth_getLogs: an own node or a keyed provider';
  assert.match(
    refusals[0]!.detail,
    new RegExp(`^bsc-devnet, 127\\.0\\.0\\.1:\\d+: refuses a one-block eth_getLogs for the pinned USDT and USDC \\(limit exceeded \\(-32005\\)\\): ${fix}$`),
  );
  assert.match(refusals[1]!.detail, /\(Please specify an address in your request.*\(-32701\)\)/);
  assert.match(refusals[2]!.detail, new RegExp(`\\(HTTP 403\\): ${fix}$`));
  // The probe is the watcher's smallest query: one finalized block, the pinned contracts, topic0 Transfer.
  const asked = limit.calls.find((c) => c.method === 'eth_getLogs')!.params[0];
  const finalized = `0x${sim.chain('bsc-devnet')!.finalized().toString(16)}`;
  assert.deepEqual(asked, {
    fromBlock: finalized,
    toBlock: finalized,
    address: NETWORKS['bsc-devnet'].tokens.map((t) => t.contract),
    topics: [TRANSFER_TOPIC],
  });
});

test('doctor: a provider that never answers eth_getLogs, or anything, fails within the timeout', async (t) => {
  const sim = await simulator(t);
  sim.fail('bsc-devnet', 'eth_getLogs', { hang: true });
  sim.fail('ethereum-devnet', 'eth_chainId', { hang: true });
  const started = performance.now();
  const r = await evmDoctor(
    [
      { id: 'bsc-devnet', urls: [sim.urlOf('bsc-devnet')] },
      { id: 'ethereum-devnet', urls: [sim.urlOf('ethereum-devnet')] },
    ],
    'devnet',
    400,
  );
  assert.ok(performance.now() - started < 3000, 'the providers were asked at once, each within its timeout');
  assert.match(
    find(r.findings, 'fail', 'evm logs', 'bsc-devnet'),
    /refuses a one-block eth_getLogs for the pinned USDT and USDC \(no answer in 0\.4 s\): .*an own node or a keyed provider$/,
  );
  assert.match(find(r.findings, 'fail', 'evm chain', 'ethereum-devnet'), /: no answer in 0\.4 s \(timeout_seconds = 3\)$/);
});

test('doctor: a provider without finalized blocks (an error, null, or its head called final) is a problem; the confirmations it suggests work', async (t) => {
  const sim = await simulator(t);
  const refusing = await hostile(t, sim.urlOf('ethereum-devnet'));
  refusing.set({
    refuse: (call) =>
      call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized' ? { code: -32000, message: 'finalized block not found' } : undefined,
  });
  const empty = await hostile(t, sim.urlOf('ethereum-devnet'));
  empty.set({ result: (call, result) => (call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized' ? null : result) });
  const headFinal = await hostile(t, sim.urlOf('ethereum-devnet'));
  headFinal.set({ request: (call) => (call.params[0] === 'finalized' ? { ...call, params: ['latest', ...call.params.slice(1)] } : call) });
  const r = await evmDoctor([{ id: 'ethereum-devnet', urls: [refusing.url, empty.url, headFinal.url] }]);
  const finals = r.findings.filter((f) => f.check === 'evm final');
  assert.deepEqual(
    finals.map((f) => f.level),
    ['fail', 'fail', 'fail'],
    r.text,
  );
  const fix = 'this provider does not serve finalized blocks: choose finality = 10 \\(confirmations, about 10 s on ethereum-devnet\\) or another provider$';
  assert.match(finals[0]!.detail, new RegExp(`: no finalized block \\(finalized block not found \\(-32000\\)\\): ${fix}`));
  assert.match(finals[1]!.detail, new RegExp(`: no finalized block \\(the provider has no block finalized\\): ${fix}`));
  assert.match(finals[2]!.detail, new RegExp(`: its finalized block is not believable \\(finalized block \\d+ is 0 blocks behind the latest.*\\): ${fix}`));
  assert.equal(r.findings.filter((f) => f.check === 'evm logs').length, 0, 'no log probe without a final block');

  // The fix doctor names: a confirmation count, read from the head.
  const fixed = await evmDoctor([{ id: 'ethereum-devnet', urls: [refusing.url], finality: 10 }]);
  assert.equal(fixed.findings.filter((f) => f.level !== 'ok').length, 0, fixed.text);
  const latest = sim.chain('ethereum-devnet')!.latest();
  assert.match(
    find(fixed.findings, 'ok', 'evm final', 'ethereum-devnet'),
    new RegExp(`: block ${latest - 10}, 10 confirmations below the latest \\(${latest}\\)$`),
  );
  // And a refused `safe` names its own tag.
  refusing.set({ refuse: (call) => (call.params[0] === 'safe' ? { code: -32602, message: 'invalid block tag safe' } : undefined) });
  const safe = await evmDoctor([{ id: 'ethereum-devnet', urls: [refusing.url], finality: 'safe' }]);
  assert.match(find(safe.findings, 'fail', 'evm final', 'ethereum-devnet'), /no safe block .*does not serve safe blocks: choose finality = 10 \(confirmations/);
});

test('doctor: a 429 with Retry-After is "rate-limited" with the pause asked, a warning, and doctor does not wait it out', async (t) => {
  const sim = await simulator(t);
  const limited = await hostile(t, sim.urlOf('bsc-devnet'));
  limited.set({ rateLimit: { times: 5, retryAfter: '30' } });
  const quota = await hostile(t, sim.urlOf('bsc-devnet'));
  quota.set({
    refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: 'daily request count exceeded, request rate limited' } : undefined),
  });
  sim.fail('bsc-devnet', 'eth_getLogs', {
    status: 429,
    headers: { 'retry-after': '12' },
    body: { jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } },
  });
  const started = performance.now();
  const r = await evmDoctor([{ id: 'bsc-devnet', urls: [limited.url, quota.url, sim.urlOf('bsc-devnet')] }]);
  assert.ok(performance.now() - started < 4000, 'no Retry-After was waited out');
  assert.equal(r.findings.filter((f) => f.level === 'fail').length, 0, `rate-limited is not broken\n${r.text}`);
  assert.match(
    find(r.findings, 'warn', 'evm chain', 'bsc-devnet'),
    /^bsc-devnet, 127\.0\.0\.1:\d+: rate-limited \(HTTP 429 Too Many Requests\) and asks for a pause of 30 s \(Retry-After\); its remaining checks were skipped: run doctor again after the pause; if it recurs, lower requests_per_second or use a keyed provider$/,
  );
  assert.equal(limited.requestTimes.length, 1, 'one request, no retry');
  const logs = r.findings.filter((f) => f.check === 'evm logs');
  assert.deepEqual(
    logs.map((f) => f.level),
    ['warn', 'warn'],
    r.text,
  );
  assert.match(logs[0]!.detail, /rate-limited \(daily request count exceeded, request rate limited \(-32005\)\) without a Retry-After/);
  assert.match(logs[1]!.detail, /rate-limited \(HTTP 429 Too Many Requests\) and asks for a pause of 12 s \(Retry-After\)/);
});

test('doctor: one provider on a real network is a warning that no transfer is cross-checked; two are not', async (t) => {
  const sim = await simulator(t);
  // A BSC mainnet stand-in: the simulated chain answering chain id 56.
  const mainnet = () => ({ result: (call: { method: string }, result: unknown) => (call.method === 'eth_chainId' ? '0x38' : result) });
  const first = await hostile(t, sim.urlOf('bsc-devnet'));
  first.set(mainnet());
  const second = await hostile(t, sim.urlOf('bsc-devnet'));
  second.set(mainnet());
  const one = await evmDoctor([{ id: 'bsc-mainnet', urls: [`${first.url}/v1/K3yInPath0001`] }], 'mainnet');
  assert.match(find(one.findings, 'ok', 'evm chain', 'bsc-mainnet'), /chain id 56$/);
  assert.match(
    find(one.findings, 'warn', 'evm trust', 'bsc-mainnet'),
    /^bsc-mainnet: one provider \(127\.0\.0\.1:\d+\), trusted as it answers: no transfer is cross-checked, so a payment it leaves out is missed until a rescan and one it makes up would confirm; add a second provider to its \[\[evm\.networks\]\] providers$/,
  );
  assert.doesNotMatch(one.text, /K3yInPath/);
  const two = await evmDoctor([{ id: 'bsc-mainnet', urls: [first.url, second.url] }], 'mainnet');
  assert.equal(two.findings.filter((f) => f.level !== 'ok').length, 0, two.text);
});

test('a provider message that echoes the URL loses everything but the host', () => {
  const url = 'https://ops:Pa55word99@bsc.example.com:8545/v3/0123456789abcdef?apikey=K3y-From-Query&x=1';
  assert.equal(
    withoutUrlSecrets('project /v3/0123456789abcdef?apikey=K3y-From-Query&x=1 over quota; key 0123456789abcdef, K3y-From-Query, Pa55word99', url),
    'project … over quota; key …, …, …',
  );
  assert.equal(withoutUrlSecrets('HTTP 403 from bsc.example.com:8545', url), 'HTTP 403 from bsc.example.com:8545');
});

/** The real `gatewayd doctor` process, asynchronously: the stand-ins answer from this process meanwhile. */
function doctorProcess(config: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GATEWAYD_BIN, 'doctor', '--config', config], { env: cleanEnv(), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

test('gatewayd doctor: a key in a provider URL (path, query, user) is never printed, in ok lines and failures; a problem exits 1, good providers 0', async (t) => {
  const sim = await simulator(t);
  const tron = await startSimulatedTron({ usdtContract: TRON_NETWORKS.devnet.usdtContract, blockIntervalMs: 1000, solidityLag: 1 });
  t.after(() => tron.close());
  const echo = await hostile(t, sim.urlOf('bsc-devnet'));
  echo.set({
    refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: `limit exceeded for key S3cretKeyInPath on /v3/S3cretKeyInPath` } : undefined),
  });
  const closed = await freePort();
  const dir = tempDir('gatewayd-doctor-evm-');
  const config = join(dir, 'gatewayd.toml');
  const write = (entries: Entry[]) => {
    writeFileSync(config, `${toml(entries, 'devnet', tron.url)}\n[database]\npath = "${join(dir, 'data', 'gateway.db')}"\n`, { mode: 0o640 });
    chmodSync(config, 0o640);
  };
  write([
    { id: 'bsc-devnet', urls: [`${sim.urlOf('bsc-devnet')}?apikey=S3cretQueryKey`, `${echo.url}/v3/S3cretKeyInPath`] },
    { id: 'ethereum-devnet', urls: [`http://127.0.0.1:${closed}/rpc/S3cretKeyInPath`] },
  ]);
  assert.equal(runCli(['migrate', '--config', config]).status, 0);
  chmodSync(join(dir, 'data'), 0o700);

  const bad = await doctorProcess(config);
  assert.equal(bad.code, 1, bad.stdout + bad.stderr);
  assert.match(bad.stdout, /^ok {4}evm chain {4}bsc-devnet, 127\.0\.0\.1:\d+: chain id 900056$/m);
  assert.match(bad.stdout, /^FAIL {2}evm logs {5}bsc-devnet, 127\.0\.0\.1:\d+: refuses a one-block eth_getLogs .*\(limit exceeded for key … on …/m);
  assert.match(bad.stdout, new RegExp(`^FAIL  evm chain    ethereum-devnet, 127\\.0\\.0\\.1:${closed}: unreachable \\(ECONNREFUSED\\)$`, 'm'));
  assert.doesNotMatch(bad.stdout + bad.stderr, /S3cret/);
  // A user and password in a provider URL: the configuration itself is refused, the password never printed.
  write([{ id: 'bsc-devnet', urls: [`http://ops:S3cretPassword@127.0.0.1:${closed}/`] }]);
  const userinfo = await doctorProcess(config);
  assert.equal(userinfo.code, 1, userinfo.stdout + userinfo.stderr);
  assert.match(userinfo.stdout + userinfo.stderr, /a provider URL cannot carry a user name or password \(user:pass@\)/);
  assert.doesNotMatch(userinfo.stdout + userinfo.stderr, /S3cret/);

  write([{ id: 'bsc-devnet', urls: [`${sim.urlOf('bsc-devnet')}?apikey=S3cretQueryKey`] }]);
  const good = await doctorProcess(config);
  assert.doesNotMatch(good.stdout, /^FAIL/m, good.stdout);
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.match(good.stdout, /^ok {4}evm logs {5}bsc-devnet/m);
  assert.doesNotMatch(good.stdout + good.stderr, /S3cret/);
});

test('doctor without [[evm.networks]] asks no EVM provider and prints no EVM line', async () => {
  const lines: string[] = [];
  const dir = tempDir('gatewayd-doctor-evm-');
  const path = join(dir, 'gatewayd.toml');
  writeFileSync(path, toml([]), { mode: 0o600 });
  await runDoctor(
    () => loadConfig({ path, env: {} }),
    (l) => lines.push(l),
    { timeoutMs: 500 },
  );
  assert.equal(lines.filter((l) => l.slice(6).startsWith('evm')).length, 0, lines.join('\n'));
});
