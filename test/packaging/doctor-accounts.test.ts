/**
 * `gatewayd doctor` on the Solana and TON networks of [[solana.networks]] and [[ton.networks]]: per
 * provider the network it serves (genesis hash, global id), the head the watcher believes, and the
 * watcher's smallest account read (getSignaturesForAddress; toncenter's /jetton/transfers; tonapi's
 * accounts/_bulk), against loopback providers in the real shapes (test/chains/solana/solana-rpc.ts,
 * test/chains/ton/index-server.ts): good ones, another network's, a refusal, a 429 with Retry-After;
 * a key in a provider's URL or its api_key is never printed; `runDoctor` runs the checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { checkAccountNetworks } from '../../src/cli/doctor-accounts.js';
import { runDoctor, type Finding } from '../../src/cli/doctor.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { SOLANA_GENESIS_HASHES } from '../../src/chains/solana/reader.js';
import { Ledger } from '../chains/solana/ledger.js';
import { startSolanaRpc, type SolanaRpcServer } from '../chains/solana/solana-rpc.js';
import { startIndexServer, TonChainModel, type Hostility } from '../chains/ton/index-server.js';
import { tempDir } from '../helpers/app.js';

const KEY = 'k3y-SECRET-0123456789abcdef';

type Hook = { after(fn: () => unknown): void };

async function solanaNode(t: Hook, genesis = SOLANA_GENESIS_HASHES['solana-devnet']): Promise<SolanaRpcServer> {
  const ledger = new Ledger(genesis);
  ledger.advance(5000n, 32n);
  const server = await startSolanaRpc(ledger);
  t.after(() => server.close());
  return server;
}

async function tonIndex(t: Hook, globalId: number, hostile: { toncenter?: Hostility; tonapi?: Hostility } = {}) {
  const model = new TonChainModel(NETWORKS['ton-devnet'].tokens[0]!.contract);
  model.globalId = globalId;
  const server = await startIndexServer(model, hostile);
  t.after(() => server.close());
  return server;
}

interface Sections {
  solana?: string[];
  ton?: Array<{ url: string; kind: 'toncenter' | 'tonapi'; apiKey?: string }>;
}

function toml(s: Sections): string {
  let out = `[server]\nsecret = "0123456789abcdef0123456789abcdef-long-enough"\n[tron]\nnetwork = "devnet"\napi_url = "http://127.0.0.1:9"\n`;
  if (s.solana) out += `[[solana.networks]]\nid = "solana-devnet"\nproviders = [${s.solana.map((u) => `{ url = "${u}", timeout_seconds = 3 }`).join(', ')}]\n`;
  if (s.ton) {
    const ps = s.ton.map((p) => `{ url = "${p.url}", kind = "${p.kind}", api_key = "${p.apiKey ?? ''}", requests_per_second = 0, timeout_seconds = 3 }`);
    out += `[[ton.networks]]\nid = "ton-devnet"\nproviders = [${ps.join(', ')}]\n`;
  }
  return out;
}

function configPath(s: Sections): string {
  const path = join(tempDir('gatewayd-doctor-accounts-'), 'gatewayd.toml');
  writeFileSync(path, toml(s), { mode: 0o600 });
  return path;
}

async function doctor(s: Sections): Promise<{ findings: Finding[]; text: string }> {
  const findings = await checkAccountNetworks(loadConfig({ path: configPath(s), env: {} }), 5000);
  return { findings, text: findings.map((f) => `${f.level} ${f.check} ${f.detail}`).join('\n') };
}

const shape = (findings: Finding[]) => findings.map((f) => `${f.level} ${f.check}`);

test('doctor: a good Solana provider: genesis hash, finalized slot, getSignaturesForAddress served', async (t) => {
  const node = await solanaNode(t);
  const r = await doctor({ solana: [node.url] });
  assert.deepEqual(shape(r.findings), ['ok solana network', 'ok solana final', 'ok solana signatures'], r.text);
  assert.match(r.text, /finalized slot 4968/);
  const probe = node.calls.find((c) => c.method === 'getSignaturesForAddress');
  assert.equal(probe?.params[1].commitment, 'finalized');
  assert.equal(probe?.params[1].limit, 1);
});

test('doctor: a Solana provider of another cluster serves another network, named, with the fix; nothing more is asked of it', async (t) => {
  const node = await solanaNode(t, SOLANA_GENESIS_HASHES['solana-mainnet']);
  const r = await doctor({ solana: [node.url] });
  assert.deepEqual(shape(r.findings), ['fail solana network'], r.text);
  assert.match(r.text, /serves another network \(genesis hash 5eykt4\S+, solana-mainnet\), not solana-devnet .*fix this provider's url or the network's id/);
  assert.deepEqual(
    node.calls.map((c) => c.method),
    ['getGenesisHash'],
  );
});

test('doctor: a Solana provider that refuses getSignaturesForAddress fails that check', async (t) => {
  const node = await solanaNode(t);
  node.set({ refuse: (c) => (c.method === 'getSignaturesForAddress' ? { code: -32601, message: 'Method not found' } : undefined) });
  const r = await doctor({ solana: [node.url] });
  assert.deepEqual(shape(r.findings), ['ok solana network', 'ok solana final', 'fail solana signatures'], r.text);
  assert.match(r.text, /refuses getSignaturesForAddress \(.*Method not found.*\)/);
});

test('doctor: a rate-limited Solana provider is a warning naming its Retry-After; the key in its URL is never printed', async (t) => {
  const node = await solanaNode(t);
  node.set({ rateLimit: { times: 10, retryAfter: '17' } });
  const r = await doctor({ solana: [`${node.url}/${KEY}?api-key=${KEY}`] });
  assert.deepEqual(shape(r.findings), ['warn solana network'], r.text);
  assert.match(r.text, /rate-limited \(HTTP 429\) and asks for a pause of 17 s \(Retry-After\)/);
  assert.doesNotMatch(r.text, /SECRET/);
  // Answering again, its findings still never carry the key.
  node.set({});
  const good = await doctor({ solana: [`${node.url}/${KEY}?api-key=${KEY}`] });
  assert.deepEqual(shape(good.findings), ['ok solana network', 'ok solana final', 'ok solana signatures'], good.text);
  assert.doesNotMatch(good.text, /SECRET/);
});

test('doctor: good toncenter and tonapi providers: global id, committed masterchain block, the account read served', async (t) => {
  const index = await tonIndex(t, NETWORKS['ton-devnet'].chainId!);
  const r = await doctor({
    ton: [
      { url: index.toncenterUrl, kind: 'toncenter', apiKey: KEY },
      { url: index.tonapiUrl, kind: 'tonapi', apiKey: KEY },
    ],
  });
  assert.deepEqual(shape(r.findings), ['ok ton network', 'ok ton final', 'ok ton transfers', 'ok ton network', 'ok ton final', 'ok ton accounts'], r.text);
  assert.match(r.text, /global id 900239/);
  assert.match(r.text, /committed masterchain block 1000/);
  assert.match(r.text, /\/jetton\/transfers served/);
  assert.doesNotMatch(r.text, /SECRET/);
});

test('doctor: a TON index of the mainnet, configured for ton-devnet, serves another network, named, with the fix', async (t) => {
  const index = await tonIndex(t, -239);
  const r = await doctor({
    ton: [
      { url: index.toncenterUrl, kind: 'toncenter' },
      { url: index.tonapiUrl, kind: 'tonapi' },
    ],
  });
  assert.deepEqual(shape(r.findings), ['fail ton network', 'fail ton network'], r.text);
  assert.match(
    r.text,
    /serves another network \(global id -239, ton-mainnet\), not ton-devnet \(global id 900239\): fix this provider's url or the network's id/,
  );
  assert.equal(index.counts.toncenter, 1);
  assert.equal(index.counts.tonapi, 1);
});

test('doctor: a rate-limited toncenter is a warning naming its Retry-After; its api_key is never printed', async (t) => {
  const index = await tonIndex(t, NETWORKS['ton-devnet'].chainId!, { toncenter: { rateLimit: { times: 10, retryAfter: '9' } } });
  const r = await doctor({ ton: [{ url: index.toncenterUrl, kind: 'toncenter', apiKey: KEY }] });
  assert.deepEqual(shape(r.findings), ['warn ton network'], r.text);
  assert.match(r.text, /rate-limited \(HTTP 429\) and asks for a pause of 9 s \(Retry-After\)/);
  assert.doesNotMatch(r.text, /SECRET/);
});

test('doctor: a toncenter that refuses /jetton/transfers fails that check', async (t) => {
  // An index that takes no owner at all in one request (as a proxy that strips the list would answer).
  const index = await tonIndex(t, NETWORKS['ton-devnet'].chainId!, { toncenter: { maxOwners: 0 } });
  const r = await doctor({ ton: [{ url: index.toncenterUrl, kind: 'toncenter' }] });
  assert.deepEqual(shape(r.findings), ['ok ton network', 'ok ton final', 'fail ton transfers'], r.text);
  assert.match(r.text, /refuses \/jetton\/transfers/);
});

test('doctor: runDoctor reports the Solana and TON checks', async (t) => {
  const node = await solanaNode(t);
  const index = await tonIndex(t, NETWORKS['ton-devnet'].chainId!);
  const path = configPath({ solana: [node.url], ton: [{ url: index.toncenterUrl, kind: 'toncenter' }] });
  const lines: string[] = [];
  await runDoctor(
    () => loadConfig({ path, env: {} }),
    (l) => lines.push(l),
    { timeoutMs: 2000 },
  );
  const text = lines.join('\n');
  for (const check of ['solana network', 'solana final', 'solana signatures', 'ton network', 'ton final', 'ton transfers']) {
    assert.ok(
      lines.some((l) => l.startsWith('ok') && l.includes(check)),
      `${check}:\n${text}`,
    );
  }
});
