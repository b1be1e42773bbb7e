/**
 * bin/gatewayd on a PATH whose only Node is too old (the machine's distribution Node 20): it runs
 * the command on the Node that `node bin/node-runtime.mjs` fetched into the clone (.node-<major>/),
 * and says what to do when there is none. The clone is a temporary folder holding this build's
 * bin/ and dist/, with the Node running this test standing in for the fetched one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../helpers/app.js';

const OLD_NODE = '/usr/bin/node';
const oldMajor = existsSync(OLD_NODE) ? Number(spawnSync(OLD_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) : NaN;
const repo = resolve(import.meta.dirname, '../../..');

test(
  'bin/gatewayd on a PATH with only an old Node runs on the Node fetched into the clone',
  { skip: !(oldMajor < 22) && `no Node older than 22 at ${OLD_NODE}` },
  () => {
    const clone = tempDir('gatewayd-old-node-');
    mkdirSync(join(clone, 'bin'));
    for (const f of ['gatewayd', 'node-runtime.mjs']) copyFileSync(join(repo, 'bin', f), join(clone, 'bin', f));
    symlinkSync(join(repo, 'dist'), join(clone, 'dist'));
    const pathDir = join(clone, 'path');
    mkdirSync(pathDir);
    symlinkSync(OLD_NODE, join(pathDir, 'node'));
    const run = (args: string[]) =>
      spawnSync(join(clone, 'bin', 'gatewayd'), args, { cwd: clone, env: { PATH: pathDir, HOME: clone }, encoding: 'utf8', timeout: 60_000 });

    const none = run(['version']);
    assert.equal(none.status, 1);
    assert.match(none.stderr, new RegExp(`needs Node.js 22 or newer \\(this is v${oldMajor}\\.[^)]*\\); run \`node bin/node-runtime.mjs binary\` once`));

    const fetched = join(clone, '.node-26', 'runtime', 'package', 'bin');
    mkdirSync(fetched, { recursive: true });
    symlinkSync(process.execPath, join(fetched, 'node'));
    const v = run(['version']);
    assert.equal(v.status, 0, v.stderr);
    assert.match(v.stdout, new RegExp(`\\(Node\\.js ${process.versions.node.replaceAll('.', '\\.')}, SQLite`));
    // Exit codes and stderr come through unchanged.
    const bad = run(['frobnicate']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown command "frobnicate"/);
    rmSync(clone, { recursive: true, force: true });
  },
);
