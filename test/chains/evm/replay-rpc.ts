/**
 * A loopback JSON-RPC server that replays recorded `eth_getLogs` answers (test/fixtures/evm/), with
 * block numbers shifted by `shift`: it answers `eth_chainId`, `eth_getBlockByNumber` (tags and
 * numbers; the recorded blockHash at a recorded log's block, a made-up one elsewhere, the replay's
 * times) and `eth_getLogs` with the filter applied as a node applies it (block range, addresses,
 * topic0, an OR-list of topic2).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  chainId: string;
  logs: Array<Record<string, any>>;
}

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

export async function startReplayRpc(recorded: Recorded, options: { shift: bigint; latest: bigint; finalized: bigint; nowSeconds: number }) {
  const logs: Array<Record<string, any>> = recorded.logs.map((l) => ({ ...l, blockNumber: hex(BigInt(l.blockNumber) + options.shift) }));
  const hashes = new Map(logs.map((l) => [BigInt(l.blockNumber), l.blockHash as string]));
  const header = (n: bigint) => ({
    number: hex(n),
    hash: hashes.get(n) ?? `0x${createHash('sha256').update(`replay block ${n}`).digest('hex')}`,
    // Twelve seconds a block, ending now.
    timestamp: hex(BigInt(options.nowSeconds) - (options.latest - n) * 12n),
  });
  function answer(method: string, params: any[]): unknown {
    switch (method) {
      case 'eth_chainId':
        return recorded.chainId;
      case 'eth_getBlockByNumber': {
        const tag = params[0];
        const n = tag === 'latest' ? options.latest : tag === 'finalized' || tag === 'safe' ? options.finalized : BigInt(tag);
        return n > options.latest ? null : header(n);
      }
      case 'eth_getLogs': {
        const f = params[0];
        const addresses = ([] as string[]).concat(f.address ?? []).map((a) => a.toLowerCase());
        const [t0, , t2] = f.topics ?? [];
        const recipients = t2 === undefined || t2 === null ? undefined : ([] as string[]).concat(t2).map((t) => t.toLowerCase());
        return logs.filter((l) => {
          const n = BigInt(l.blockNumber);
          return (
            n >= BigInt(f.fromBlock) &&
            n <= BigInt(f.toBlock) &&
            (addresses.length === 0 || addresses.includes(l.address.toLowerCase())) &&
            (!t0 || l.topics[0].toLowerCase() === t0.toLowerCase()) &&
            (!recipients || recipients.includes(String(l.topics[2]).toLowerCase()))
          );
        });
      }
      default:
        throw new Error(`the replay has no ${method}`);
    }
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const one = (r: any) => {
        try {
          return { jsonrpc: '2.0', id: r.id, result: answer(r.method, r.params ?? []) };
        } catch (err) {
          return { jsonrpc: '2.0', id: r.id, error: { code: -32601, message: (err as Error).message } };
        }
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
