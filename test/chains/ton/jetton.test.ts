/**
 * Jetton wallets derived locally from (USDT's master, owner) with USDT's wallet code (a library cell
 * of its code hash), checked against a real mainnet pair; internal_transfer bodies parsed (amount,
 * sender, the comment inline or in a reference, a binary comment that is no text, another op refused);
 * and @ton/core loaded only when a cell is first needed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Address, beginCell } from '@ton/core';
import { NETWORKS } from '../../../src/chains/networks.js';
import { JettonWallets, jettonWalletAddress, OP_TRANSFER, parseInternalTransfer, USDT_WALLET_CODE_HASH } from '../../../src/chains/ton/jetton.js';

const USDT = NETWORKS['ton-mainnet'].tokens[0]!.contract;
const OWNER = '0:1f5806c73d03bbc96eb7eebf16067f1f2e8e270cfa16d57001aa9eaf7456f008';

test("an owner's USDT jetton wallet is derived as USDT's master derives it (a real mainnet owner and wallet)", async () => {
  // toncenter's record of mainnet transaction exkKjJjzWuZCh8zER2b8dVcSJRGR/LBQeG+YeyMfeOM= (May 2024)
  // names this owner as the source and this wallet as its source_wallet (test/fixtures/ton/README.md).
  assert.equal(await jettonWalletAddress(USDT, OWNER), '0:b7f5cd75f68a8f91a07e7e203cfc429f7a33f6e3f232282344c8a154b2f5ec7c');
  assert.equal(
    await jettonWalletAddress('EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', OWNER.toUpperCase().replace('0X', '0x')),
    '0:b7f5cd75f68a8f91a07e7e203cfc429f7a33f6e3f232282344c8a154b2f5ec7c',
  );
  const devnet = await jettonWalletAddress(NETWORKS['ton-devnet'].tokens[0]!.contract, OWNER);
  assert.notEqual(devnet, '0:b7f5cd75f68a8f91a07e7e203cfc429f7a33f6e3f232282344c8a154b2f5ec7c', 'another master, another wallet');
  const wallets = new JettonWallets(USDT);
  const map = await wallets.walletsOf([OWNER]);
  assert.equal(wallets.ownerOf(map.get(OWNER)!), OWNER);
});

function body(options: { op?: number; comment?: 'inline' | 'ref' | 'binary' | 'none'; text?: string } = {}) {
  const from = Address.parseRaw(OWNER);
  const b = beginCell()
    .storeUint(options.op ?? 0x178d4519, 32)
    .storeUint(77n, 64)
    .storeCoins(25_000_000n)
    .storeAddress(from)
    .storeAddress(from)
    .storeCoins(1n);
  const text = options.text ?? 'inv_9f2c';
  switch (options.comment ?? 'inline') {
    case 'inline':
      b.storeBit(0).storeUint(0, 32).storeStringTail(text);
      break;
    case 'ref':
      b.storeBit(1).storeRef(beginCell().storeUint(0, 32).storeStringTail(text).endCell());
      break;
    case 'binary':
      b.storeBit(0).storeUint(0, 32).storeUint(0xff, 8).storeUint(0xdeadbeef, 32);
      break;
    case 'none':
      b.storeBit(0);
  }
  return b.endCell().toBoc();
}

test('an internal_transfer body gives its amount, sender and text comment (inline or referenced, base64 or hex); a binary comment is no text', async () => {
  for (const [encoded, comment] of [
    [body().toString('base64'), 'inv_9f2c'],
    [body({ comment: 'ref' }).toString('hex'), 'inv_9f2c'],
    [body({ comment: 'ref', text: 'Заказ №12 — спасибо' }).toString('base64'), 'Заказ №12 — спасибо'],
    [body({ comment: 'binary' }).toString('base64'), undefined],
    [body({ comment: 'none' }).toString('base64'), undefined],
  ] as const) {
    const parsed = await parseInternalTransfer(encoded);
    assert.ok(parsed.ok, encoded);
    assert.equal(parsed.value.amount, 25_000_000n);
    assert.equal(parsed.value.queryId, 77n);
    assert.equal(parsed.value.from, OWNER);
    assert.equal(parsed.value.comment, comment);
  }
  const transfer = await parseInternalTransfer(body({ op: OP_TRANSFER }).toString('base64'));
  assert.equal(transfer.ok, false, 'a transfer (sender side) body is not a receipt');
  assert.equal((await parseInternalTransfer('bm90IGEgYm9j')).ok, false);
});

test('@ton/core is not loaded by importing the TON family, only when a wallet is first derived', () => {
  const dist = resolve(import.meta.dirname, '../../../src/chains');
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { if (specifier === '@ton/core') seen.push(specifier); return next(specifier, context); } });
    await import(${JSON.stringify(`${dist}/networks.js`)});
    await import(${JSON.stringify(`${dist}/ton/family.js`)});
    const { ToncenterReader } = await import(${JSON.stringify(`${dist}/ton/toncenter.js`)});
    const before = seen.length;
    const jetton = await import(${JSON.stringify(`${dist}/ton/jetton.js`)});
    await jetton.jettonWalletAddress('0:${'11'.repeat(32)}', '0:${'22'.repeat(32)}');
    console.log(JSON.stringify({ before, after: seen.length, reader: typeof ToncenterReader }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { before: 0, after: 1, reader: 'function' });
});

test("USDT's wallet code hash is the one its master's recorded get_jetton_data answer holds, as a library cell", async () => {
  const { Cell, parseTuple } = await import('@ton/core');
  const { readFileSync } = await import('node:fs');
  const fixture = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../../test/fixtures/ton/usdt-master-get-jetton-data.json'), 'utf8'));
  const stack = parseTuple(Cell.fromHex(fixture.stack));
  const code = stack[4];
  assert.equal(code?.type, 'cell');
  const cell = (code as { cell: InstanceType<typeof Cell> }).cell;
  assert.equal(cell.isExotic, true, 'a library cell');
  assert.equal(cell.bits.toString().toLowerCase(), `02${USDT_WALLET_CODE_HASH}`);
  // Its content (the third item) points at Tether's own metadata.
  assert.ok(Buffer.from(fixture.stack, 'hex').includes('https://tether.to/usdt-ton.json'));
});
