/**
 * A loopback stand-in that replays recorded mainnet java-tron answers: TransactionInfos as
 * recorded (every byte kept but `blockNumber` and `blockTimeStamp`, shifted so the recorded
 * blocks land just after `now`), a block every 3 s, solidified 19 blocks behind the head. Blocks
 * without recorded infos are empty (their whole-block answer lists no transaction).
 *
 * The recordings are provided beside the clone (CI has them) and read at run time; they are not
 * part of the repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';

export const SAMPLES_DIR = resolve(process.cwd(), '..', 'shared', 'realchain-samples');

export function samplesPresent(): boolean {
  return existsSync(join(SAMPLES_DIR, 'README.md'));
}

export function readSample(path: string): unknown {
  return JSON.parse(readFileSync(join(SAMPLES_DIR, path), 'utf8')) as unknown;
}

type Info = Record<string, unknown>;

export interface ReplayBlock {
  number: number;
  timestamp: number;
  infos: Info[];
  /** Serve blockNumber / blockTimeStamp as decimal strings (as some gateways do). */
  numbersAsStrings?: boolean;
}

export interface ReplayNode {
  url: string;
  blocks: Map<number, ReplayBlock>;
  blockTime(n: number): number;
  close(): Promise<void>;
}

/**
 * Groups the infos by their recorded block and places group k at block `firstBlock + 3k`, with the
 * chain's times anchored at (anchorBlock, anchorTime).
 */
export async function startReplayNode(o: {
  infos: Info[];
  now: () => number;
  anchorBlock: number;
  anchorTime: number;
  firstBlock: number;
  stringsEvery?: number;
}): Promise<ReplayNode> {
  const blockTime = (n: number) => o.anchorTime + (n - o.anchorBlock) * 3000;
  const groups = new Map<number, Info[]>();
  for (const i of o.infos) {
    const key = Number(i.blockNumber);
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const blocks = new Map<number, ReplayBlock>();
  [...groups.keys()]
    .sort((a, b) => a - b)
    .forEach((key, k) => {
      const number = o.firstBlock + 3 * k;
      const timestamp = blockTime(number);
      const infos = groups.get(key)!.map((i) => ({ ...i, blockNumber: number, blockTimeStamp: timestamp }));
      blocks.set(number, { number, timestamp, infos, numbersAsStrings: o.stringsEvery !== undefined && k % o.stringsEvery === 0 });
    });
  const solid = () => o.anchorBlock + Math.floor((o.now() - o.anchorTime) / 3000) - 19;
  const header = (n: number, txIds: string[] | undefined) => ({
    blockID: n.toString(16).padStart(16, '0') + 'ab'.repeat(24),
    block_header: {
      raw_data: { number: n, txTrieRoot: txIds && txIds.length === 0 ? '0'.repeat(64) : 'cd'.repeat(32), timestamp: blockTime(n), version: 31 },
      witness_signature: '00',
    },
    ...(txIds && txIds.length > 0 ? { transactions: txIds.map((txID) => ({ txID })) } : {}),
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      const path = new URL(req.url ?? '/', 'http://replay').pathname;
      const send = (text: string) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
      };
      const head = solid();
      if (path === '/walletsolidity/getblock' && body.id_or_num === undefined) return send(JSON.stringify(header(head, undefined)));
      const n = Number(body.num);
      if (path === '/walletsolidity/gettransactioninfobyblocknum') {
        if (n > head) return send('[]');
        const b = blocks.get(n);
        if (!b) return send('[]');
        const text = JSON.stringify(b.infos);
        return send(b.numbersAsStrings ? text.replace(/"(blockNumber|blockTimeStamp)":(\d+)/g, '"$1":"$2"') : text);
      }
      if (path === '/walletsolidity/gettransactioncountbyblocknum') {
        const count = n > head ? 0 : (blocks.get(n)?.infos.length ?? 0);
        return send(JSON.stringify(count === 0 ? {} : { count }));
      }
      if (path === '/walletsolidity/gettransactioninfobyid') {
        const id = String(body.value ?? '');
        for (const b of blocks.values()) {
          const info = b.number <= head ? b.infos.find((i) => i.id === id) : undefined;
          if (info) return send(JSON.stringify(info));
        }
        return send('{}');
      }
      if (path === '/walletsolidity/getblockbynum') {
        if (n > head) return send('{}');
        return send(
          JSON.stringify(
            header(
              n,
              (blocks.get(n)?.infos ?? []).map((i) => String(i.id)),
            ),
          ),
        );
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ Error: 'not found' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    blocks,
    blockTime,
    async close() {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
