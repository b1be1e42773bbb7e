/**
 * A minimal token for anvil, written here as EVM assembly (nothing is compiled): installed with
 * `anvil_setCode` at a pinned devnet address, or at any other address as a look-alike.
 *
 * - `symbol()` (selector 0x95d89b41) returns the ABI string given (e.g. "USDT"), so a look-alike
 *   names itself exactly as the real token does;
 * - any other call reads its calldata after the 4-byte selector as (to, value) pairs of 32 bytes each
 *   and emits one `Transfer(caller, to, value)` per pair (LOG3: topic0 the event, topic1 the caller,
 *   topic2 `to`, data `value`), then returns true. `transfer(to, value)` is one pair, so it behaves as an
 *   ERC-20 transfer as far as logs go; several pairs make one transaction pay several addresses (a
 *   batch payout, where only the log index tells the transfers apart). There are no balances: the
 *   reader under test reads logs, never state.
 */
import { TRANSFER_TOPIC } from '../../../src/chains/evm/reader.js';

type Op = string | { push: string } | { label: string } | { jumpTo: string };

const OPCODES: Record<string, number> = {
  ADD: 0x01,
  GT: 0x11,
  EQ: 0x14,
  ISZERO: 0x15,
  SHR: 0x1c,
  CALLER: 0x33,
  CALLDATALOAD: 0x35,
  CALLDATASIZE: 0x36,
  MSTORE: 0x52,
  JUMP: 0x56,
  JUMPI: 0x57,
  JUMPDEST: 0x5b,
  DUP1: 0x80,
  LOG3: 0xa3,
  RETURN: 0xf3,
};

/** Assembles ops into hex: PUSHn for `push` (n from its length), PUSH2 label offsets, JUMPDEST at labels. */
function assemble(ops: Op[]): string {
  const size = (op: Op): number => (typeof op === 'string' ? 1 : 'push' in op ? 1 + op.push.length / 2 : 'jumpTo' in op ? 3 : 1);
  const labels = new Map<string, number>();
  let at = 0;
  for (const op of ops) {
    if (typeof op === 'object' && 'label' in op) labels.set(op.label, at);
    at += size(op);
  }
  let out = '';
  for (const op of ops) {
    if (typeof op === 'string') out += OPCODES[op]!.toString(16).padStart(2, '0');
    else if ('push' in op) out += (0x5f + op.push.length / 2).toString(16) + op.push;
    else if ('label' in op) out += '5b';
    else out += '61' + labels.get(op.jumpTo)!.toString(16).padStart(4, '0');
  }
  return `0x${out}`;
}

/** The runtime code of the token whose `symbol()` is `symbol` (at most 32 ASCII bytes). */
export function tokenRuntime(symbol: string): string {
  const sym = Buffer.from(symbol, 'ascii').toString('hex').padEnd(64, '0');
  return assemble([
    { push: '00' },
    'CALLDATALOAD',
    { push: 'e0' },
    'SHR', // the selector
    { push: '95d89b41' },
    'EQ',
    { jumpTo: 'symbol' },
    'JUMPI',
    { push: '04' }, // i: the offset of the next pair
    { label: 'loop' },
    'DUP1',
    'CALLDATASIZE',
    'GT',
    'ISZERO',
    { jumpTo: 'done' },
    'JUMPI', // no pair left at i
    'DUP1',
    { push: '20' },
    'ADD',
    'CALLDATALOAD',
    { push: '00' },
    'MSTORE', // memory[0] = value
    'DUP1',
    'CALLDATALOAD',
    'CALLER',
    { push: TRANSFER_TOPIC.slice(2) },
    { push: '20' },
    { push: '00' },
    'LOG3', // Transfer(caller, to, value)
    { push: '40' },
    'ADD',
    { jumpTo: 'loop' },
    'JUMP',
    { label: 'done' },
    { push: '01' },
    { push: '00' },
    'MSTORE',
    { push: '20' },
    { push: '00' },
    'RETURN',
    { label: 'symbol' },
    { push: '20' },
    { push: '00' },
    'MSTORE', // offset of the string
    { push: symbol.length.toString(16).padStart(2, '0') },
    { push: '20' },
    'MSTORE', // its length
    { push: sym },
    { push: '40' },
    'MSTORE', // its bytes
    { push: '60' },
    { push: '00' },
    'RETURN',
  ]);
}

/** Calldata of `transfer(to, value)` (or of several pairs: a batch payout). */
export function transferCalldata(...pairs: Array<[to: string, value: bigint]>): string {
  return '0xa9059cbb' + pairs.map(([to, value]) => to.slice(2).toLowerCase().padStart(64, '0') + value.toString(16).padStart(64, '0')).join('');
}
