/**
 * [[evm.networks]]: the networks an instance watches beside TRON, resolved once at start. Real and
 * test networks never share an instance; each network once, with a provider; the finality rule and
 * poll interval as docs/configuration.md says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, ConfigError } from '../../src/config.js';
import { tempDir } from '../helpers/app.js';

function load(text: string) {
  const dir = tempDir('gatewayd-config-networks-');
  const path = join(dir, 'gatewayd.toml');
  writeFileSync(path, text);
  return loadConfig({ env: {}, cwd: dir, path });
}

test('with no [[evm.networks]] the instance watches its TRON network alone', () => {
  const c = load('');
  assert.deepEqual(
    c.networks.map((n) => n.id),
    ['tron-mainnet'],
  );
  assert.deepEqual(c.evmNetworks, []);
});

test('EVM networks follow the TRON network in the order given, with their finality rule and poll interval', () => {
  const c = load(`
[[evm.networks]]
id = "bsc-mainnet"
providers = [{ url = "https://bsc.example/rpc" }]

[[evm.networks]]
id = "ethereum-mainnet"
finality = 64
poll_interval_seconds = 30
providers = [{ url = "https://eth-a.example" }, { url = "https://eth-b.example", requests_per_second = 2 }]

[[evm.networks]]
id = "base-mainnet"
finality = "safe"
providers = [{ url = "https://base.example" }]
`);
  assert.deepEqual(
    c.networks.map((n) => n.id),
    ['tron-mainnet', 'bsc-mainnet', 'ethereum-mainnet', 'base-mainnet'],
  );
  const [bsc, eth, base] = c.evmNetworks;
  assert.deepEqual(bsc!.finality, { kind: 'tag', tag: 'finalized' });
  assert.equal(bsc!.pollMs, 5000, 'polled every 5 s by default, whatever the block time');
  assert.deepEqual(eth!.finality, { kind: 'confirmations', blocks: 64 });
  assert.equal(eth!.pollMs, 30_000);
  assert.equal(eth!.providers[1]!.requests_per_second, 2);
  assert.equal(eth!.providers[0]!.requests_per_second, 10);
  assert.deepEqual(base!.finality, { kind: 'tag', tag: 'safe' });
  assert.equal(base!.network.tokens.length, 1, 'Base has USDC only');
});

test('a test EVM network on a real TRON instance (and the reverse) is refused, naming both', () => {
  assert.throws(
    () => load('[[evm.networks]]\nid = "ethereum-sepolia"\nproviders = [{ url = "https://sepolia.example" }]\n'),
    (e: unknown) => e instanceof ConfigError && /ethereum-sepolia" is a test network and tron.network = "mainnet" a real one/.test(e.message),
  );
  assert.throws(
    () => load('[tron]\nnetwork = "nile"\n[[evm.networks]]\nid = "bsc-mainnet"\nproviders = [{ url = "https://bsc.example" }]\n'),
    (e: unknown) => e instanceof ConfigError && /"bsc-mainnet" is a real network and tron.network = "nile" a test one/.test(e.message),
  );
  const ok = load('[tron]\nnetwork = "nile"\n[[evm.networks]]\nid = "ethereum-sepolia"\nproviders = [{ url = "https://sepolia.example" }]\n');
  assert.deepEqual(
    ok.networks.map((n) => n.id),
    ['tron-nile', 'ethereum-sepolia'],
  );
});

test('a network listed twice, one without a provider, an unknown id and a bad finality are refused with the key', () => {
  const twice = '[[evm.networks]]\nid = "bsc-mainnet"\nproviders = [{ url = "https://a.example" }]\n';
  assert.throws(() => load(twice + twice), /evm\.networks\[1\]\.id: "bsc-mainnet" is listed twice/);
  assert.throws(() => load('[[evm.networks]]\nid = "bsc-mainnet"\n'), /evm\.networks\[0\]\.providers: give at least one JSON-RPC provider/);
  assert.throws(
    () => load('[[evm.networks]]\nid = "bsc"\nproviders = [{ url = "https://a.example" }]\n'),
    /evm\.networks\.0\.id: expected one of "ethereum-mainnet"/,
  );
  assert.throws(
    () => load('[[evm.networks]]\nid = "bsc-mainnet"\nfinality = "latest"\nproviders = [{ url = "https://a.example" }]\n'),
    /evm\.networks\.0\.finality: expected "finalized", "safe" or a number of confirmations/,
  );
});

test('Solana and TON networks follow the EVM ones, with their providers and a 10 s poll unless told', () => {
  const c = load(`
[[ton.networks]]
id = "ton-mainnet"
poll_interval_seconds = 20
providers = [{ url = "https://toncenter.example/api/v3", kind = "toncenter", api_key = "k" }, { url = "https://tonapi.example", kind = "tonapi" }]

[[solana.networks]]
id = "solana-mainnet"
providers = [{ url = "https://sol-a.example" }, { url = "https://sol-b.example", requests_per_second = 1 }]

[[evm.networks]]
id = "base-mainnet"
providers = [{ url = "https://base.example" }]
`);
  assert.deepEqual(
    c.networks.map((n) => n.id),
    ['tron-mainnet', 'base-mainnet', 'solana-mainnet', 'ton-mainnet'],
  );
  assert.equal(c.solanaNetworks[0]!.pollMs, 10_000);
  assert.deepEqual(
    c.solanaNetworks[0]!.providers.map((p) => [p.url, p.requests_per_second]),
    [
      ['https://sol-a.example', 4],
      ['https://sol-b.example', 1],
    ],
  );
  assert.equal(c.tonNetworks[0]!.pollMs, 20_000);
  assert.deepEqual(
    c.tonNetworks[0]!.providers.map((p) => [p.kind, p.api_key, p.requests_per_second]),
    [
      ['toncenter', 'k', 1],
      ['tonapi', '', 1],
    ],
  );
});

test('a Solana or TON network on the wrong side, without a provider, twice or of an unknown kind is refused with the key', () => {
  assert.throws(
    () => load('[[solana.networks]]\nid = "solana-devnet"\nproviders = [{ url = "http://127.0.0.1:1" }]\n'),
    (e: unknown) =>
      e instanceof ConfigError && /solana\.networks\[0\]\.id: "solana-devnet" is a test network and tron.network = "mainnet" a real one/.test(e.message),
  );
  assert.throws(
    () => load('[[ton.networks]]\nid = "ton-mainnet"\n'),
    (e: unknown) => e instanceof ConfigError && /ton\.networks\[0\]\.providers: give at least one index provider/.test(e.message),
  );
  assert.throws(
    () => load('[[ton.networks]]\nid = "ton-mainnet"\nproviders = [{ url = "https://x.example", kind = "liteserver" }]\n'),
    (e: unknown) => e instanceof ConfigError && /expected "toncenter" or "tonapi"/.test(e.message),
  );
  assert.throws(
    () =>
      load(
        '[[solana.networks]]\nid = "solana-mainnet"\nproviders = [{ url = "https://a.example" }]\n[[solana.networks]]\nid = "solana-mainnet"\nproviders = [{ url = "https://b.example" }]\n',
      ),
    (e: unknown) => e instanceof ConfigError && /solana\.networks\[1\]\.id: "solana-mainnet" is listed twice/.test(e.message),
  );
});

test('a provider URL with user:pass@ is refused at start, saying where the key goes instead (EVM and TRON)', () => {
  assert.throws(
    () => load(`[[evm.networks]]\nid = "bsc-mainnet"\nproviders = [{ url = "https://user:secret@bsc.example/rpc" }]\n`),
    (err: unknown) =>
      err instanceof ConfigError &&
      /evm\.networks\.0\.providers\.0\.url: a provider URL cannot carry a user name or password \(user:pass@\).*key in the URL's path/.test(err.message) &&
      !err.message.includes('user:secret'),
  );
  assert.throws(
    () => load(`[tron]\nproviders = [{ url = "https://key@tron.example" }]\n`),
    (err: unknown) => err instanceof ConfigError && /tron\.providers\.0\.url: a provider URL cannot carry.*api_key/.test(err.message),
  );
  assert.throws(() => load(`[tron]\napi_url = "https://a:b@tron.example"\n`), /tron\.api_url: a provider URL cannot carry/);
  // A key in the path or the query is fine.
  assert.equal(load(`[[evm.networks]]\nid = "bsc-mainnet"\nproviders = [{ url = "https://bsc.example/v2/KEY" }]\n`).evmNetworks.length, 1);
});
