/**
 * The README's "Integrate in ten commands" run as written (issue 30, item 9): its shell block is read
 * from README.md, so the test breaks when the README drifts, and run by bash with `set -e` against a
 * real `gatewayd dev` process, the example receiver capturing a real delivery whose signature the
 * block then verifies with openssl from TIMESTAMP and body.json.
 *
 * The block needs curl, jq and openssl, as the README says. The test installs nothing: without one
 * of them it skips and names what is missing; CI installs them from Debian (.ci/run, apt_install).
 * Only GW and HOOK_PORT are set from outside (the README's own defaults, 8080 and 3001, could be in
 * use by another test); the block runs in a scratch folder holding links to bin/ and docs/. GW is a
 * validating proxy in front of the dev instance (test/helpers/validating-proxy.ts), which judges
 * every request and answer by the document that instance serves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { cleanEnv, freePort, startGateway, type GatewayProcess } from '../helpers/process.js';
import { startValidatingProxy } from '../helpers/validating-proxy.js';

const TOOLS = ['bash', 'curl', 'jq', 'openssl'];
const missing = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);

/** The first ```sh block under "## Integrate in ten commands". */
function walkthroughBlock(readme: string): string {
  const start = readme.indexOf('## Integrate in ten commands');
  assert.ok(start >= 0, 'README.md has the "Integrate in ten commands" section');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'the section has a sh block');
  return m[1]!;
}

interface Run {
  code: number | null;
  out: string;
}

/** bash -e -o pipefail running the block in `dir`, in its own process group (ended afterwards: the block starts a receiver). */
async function runBlock(block: string, dir: string, dev: GatewayProcess, hookPort: number, gw = dev.baseUrl): Promise<Run> {
  const env = cleanEnv({
    GATEWAYD_CONFIG: dev.configPath,
    GW: gw,
    HOOK_PORT: String(hookPort),
    // The node that runs the tests runs the receiver too.
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  });
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    /* the group has ended */
  }
  return { code, out };
}

test(
  "the README's integrator walkthrough runs as written against gatewayd dev, and verifies a captured delivery's signature",
  { skip: missing.length > 0 ? `needs ${missing.join(', ')} (the README's tools; CI installs them with apt-get in .ci/run)` : false, timeout: 180_000 },
  async (t) => {
    const block = walkthroughBlock(readFileSync(join(projectRoot(), 'README.md'), 'utf8'));
    for (const step of ['jq -e', 'CAPTURE_DIR=.', 'TIMESTAMP=$(cat TIMESTAMP)', 'cat body.json', 'openssl dgst -sha256 -hmac "$WEBHOOK_SECRET"']) {
      assert.ok(block.includes(step), `the block has ${step}`);
    }
    const dev = await startGateway({ command: ['dev'], config: { log: { level: 'warn' } } });
    t.after(() => dev.kill());
    const scratch = () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatewayd-readme-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      for (const name of ['bin', 'docs']) symlinkSync(join(projectRoot(), name), join(dir, name));
      return dir;
    };
    const dir = scratch();

    // Through a validating proxy reading the document this dev instance serves (issue 42, item 2):
    // every request and every answer of the walkthrough is inside it, the http webhook included.
    const doc = (await (await fetch(`${dev.baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
    const proxy = await startValidatingProxy(dev.baseUrl, doc);
    t.after(() => proxy.close());
    const run = await runBlock(block, dir, dev, await freePort(), proxy.url);
    assert.equal(run.code, 0, run.out);
    assert.deepEqual(proxy.violations, []);
    assert.ok(proxy.checked.length >= 10 && proxy.checked.some((r) => r === 'POST /api/v1/webhooks'), proxy.checked.join('\n'));
    const lines = run.out.split('\n');
    assert.ok(lines.includes('true'), `the replay answered idempotent_replay: true\n${run.out}`);
    assert.match(run.out, /"payable_amount": "25\.0000\d\d"/);
    assert.match(run.out, /"base_amount": "14\.060000"/, 'the CNY invoice at the simulated rate');
    assert.match(run.out, /^verified webhook\.test/m, 'the example receiver verified the delivery itself');
    assert.equal(lines.filter((l) => l === 'signature verified').length, 1, run.out);
    // What the receiver captured is the delivery itself.
    const captured = JSON.parse(readFileSync(join(dir, 'body.json'), 'utf8'));
    assert.equal(captured.type, 'webhook.test');
    assert.match(readFileSync(join(dir, 'SIGNATURE'), 'utf8'), /^sha256=[0-9a-f]{64}$/);

    // The block cannot fail silently: run again, the account exists, and it stops at once with an error.
    const again = await runBlock(block, scratch(), dev, await freePort());
    assert.notEqual(again.code, 0);
    assert.ok(!again.out.includes('signature verified'), again.out);
  },
);
