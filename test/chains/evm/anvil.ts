/**
 * A real EVM node for the EVM reader's tests: anvil (Foundry), from the dev dependency
 * @foundry-rs/anvil, whose binary comes in a platform package (@foundry-rs/anvil-linux-amd64 and the
 * others). `anvilBinary()` is undefined where no platform package is installed; tests then skip
 * with that reason. Each node listens on a loopback port of its own and is killed by `close()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The anvil binary of this platform's package, or undefined. */
export function anvilBinary(): string | undefined {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const bin = join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** Why anvil tests skip here, or false when they run. */
export function anvilSkip(): string | false {
  return anvilBinary() ? false : `no anvil binary for ${process.platform}-${process.arch} (@foundry-rs/anvil has no platform package installed here)`;
}

export interface Anvil {
  url: string;
  /** A raw JSON-RPC call to the node (test setup, not the code under test). */
  rpc<T = any>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

/** Anvil's first dev account (unlocked: eth_sendTransaction needs no key). */
export const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

/**
 * Starts anvil with a chain id. `slotsInAnEpoch` 2 makes `safe` 2 and `finalized` 4 blocks behind
 * the latest (anvil's rule: one and two epochs).
 */
export async function startAnvil(options: { chainId: number; slotsInAnEpoch?: number }): Promise<Anvil> {
  const bin = anvilBinary();
  if (!bin) throw new Error('anvil is not installed for this platform');
  const child: ChildProcess = spawn(
    bin,
    [
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--chain-id',
      String(options.chainId),
      '--slots-in-an-epoch',
      String(options.slotsInAnEpoch ?? 2),
      '--accounts',
      '2',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`anvil did not start in 60 s: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited (${code}): ${out}`));
    });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const url = `http://127.0.0.1:${port}`;
  let id = 1;
  return {
    url,
    async rpc(method, params = []) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
      });
      const body = (await res.json()) as { result?: unknown; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result as any;
    },
    async close() {
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
