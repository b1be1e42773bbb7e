/**
 * The transaction parser on transactions the real SPL Token and Associated Token Account programs
 * ran (litesvm), read in both encodings of getTransaction, which must agree: transferChecked into an
 * existing account, a transfer that first creates the receiver's account (and what the payer pays for
 * it), two transfers in one transaction, a Solana Pay reference, a failed transfer, another mint
 * refused by the program, and an inner transferChecked made by a program (a CPI: the ATA program's
 * RecoverNested).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountRole, address, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import * as token from '@solana-program/token';
import { NETWORKS } from '../../../src/chains/networks.js';
import { TOKEN_ACCOUNT_RENT_LAMPORTS } from '../../../src/chains/solana/address.js';
import { solanaPayReference } from '../../../src/chains/solana/payment-link.js';
import { readTransaction, type WatchedAccount } from '../../../src/chains/solana/transaction.js';
import type { LedgerTransaction } from './ledger.js';
import { SvmChain, USDC, USDT } from './svm.js';

const network = NETWORKS['solana-devnet'];
let chain: SvmChain;
let alice: KeyPairSigner;
let merchant: KeyPairSigner;
let aliceUsdt: Address;
let merchantUsdt: Address;
let watched: Map<string, WatchedAccount>;

before(async () => {
  chain = await SvmChain.start();
  alice = await chain.wallet();
  merchant = await chain.wallet();
  aliceUsdt = await chain.fund(alice.address, USDT, 1_000_000_000n);
  merchantUsdt = await chain.ata(merchant.address, USDT);
  watched = new Map([[merchantUsdt, { account: merchantUsdt, owner: merchant.address, token: network.tokens.find((t) => t.symbol === 'USDT')! }]]);
});

/** Both encodings of one transaction read; they must say the same. */
function read(entry: LedgerTransaction) {
  const expected = { network, signature: entry.signature, slot: entry.slot, watched };
  const fromJson = readTransaction(entry.json, expected);
  const fromParsed = readTransaction(entry.parsed, expected);
  assert.deepEqual(fromParsed, fromJson, 'jsonParsed and json agree');
  return fromJson;
}

function transferChecked(source: Address, mint: string, destination: Address, amount: bigint, authority: KeyPairSigner): Instruction {
  return token.getTransferCheckedInstruction({ source, mint: address(mint), destination, authority, amount, decimals: 6 });
}

test("a transfer that creates the merchant's token account counts; the payer pays the account's rent, 0.00203928 SOL", async () => {
  const payerBefore = chain.svm.getBalance(alice.address)!;
  const entry = await chain.send(
    [
      token.getCreateAssociatedTokenIdempotentInstruction({ payer: alice, ata: merchantUsdt, owner: merchant.address, mint: address(USDT) }),
      token.getTransferInstruction({ source: aliceUsdt, destination: merchantUsdt, authority: alice, amount: 12_345_678n }),
    ],
    alice,
  );
  const r = read(entry);
  assert.deepEqual(
    r.transfers.map((t) => [t.raw, t.from, t.to, t.tokenAccount, t.logIndex, t.blockNumber]),
    [[12_345_678n, alice.address, merchant.address, merchantUsdt, 1000, entry.slot]],
  );
  assert.equal(
    entry.json.meta.preTokenBalances.some((b: { accountIndex: number }) => entry.accounts[b.accountIndex] === merchantUsdt),
    false,
    'no balance before',
  );
  assert.equal(chain.svm.minimumBalanceForRentExemption(165n), TOKEN_ACCOUNT_RENT_LAMPORTS);
  assert.equal(chain.svm.getBalance(merchantUsdt), TOKEN_ACCOUNT_RENT_LAMPORTS);
  assert.equal(
    payerBefore - chain.svm.getBalance(alice.address)!,
    TOKEN_ACCOUNT_RENT_LAMPORTS + 5000n,
    'the payer funded the account, besides the fee of one signature',
  );
});

test('transferChecked into the existing account, twice in one transaction, gives two transfers whose sum is the balance change', async () => {
  const entry = await chain.send(
    [transferChecked(aliceUsdt, USDT, merchantUsdt, 1_000_000n, alice), transferChecked(aliceUsdt, USDT, merchantUsdt, 2_500_000n, alice)],
    alice,
  );
  const r = read(entry);
  assert.deepEqual(
    r.transfers.map((t) => [t.raw, t.logIndex, t.amount]),
    [
      [1_000_000n, 0, { exact: true, micros: 1_000_000n }],
      [2_500_000n, 1000, { exact: true, micros: 2_500_000n }],
    ],
  );
});

test('a Solana Pay reference the wallet appends to the transfer instruction is reported on the transfer, in both encodings', async () => {
  const reference = solanaPayReference('inv_svm:0');
  const ix = transferChecked(aliceUsdt, USDT, merchantUsdt, 7_000_000n, alice);
  const withReference = { ...ix, accounts: [...ix.accounts!, { address: address(reference), role: AccountRole.READONLY }] } as Instruction;
  const entry = await chain.send([withReference], alice);
  assert.equal(entry.err, null, 'the Token program accepts the extra read-only account');
  const r = read(entry);
  assert.deepEqual(
    r.transfers.map((t) => [t.raw, t.references]),
    [[7_000_000n, [reference]]],
  );
});

test('a transfer the program refuses (more than the balance) is in the ledger as failed and pays nothing', async () => {
  const entry = await chain.send([transferChecked(aliceUsdt, USDT, merchantUsdt, 999_000_000_000n, alice)], alice);
  assert.deepEqual(entry.err, { InstructionError: [0, { Custom: 1 }] });
  const r = read(entry);
  assert.deepEqual(r.transfers, []);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['failed'],
  );
});

test("another mint cannot be moved into the merchant's USDT account: the program refuses it, checked or not", async () => {
  const aliceFake = await chain.fund(alice.address, chain.lookalike, 50_000_000n);
  for (const ix of [
    transferChecked(aliceFake, chain.lookalike, merchantUsdt, 10_000_000n, alice),
    token.getTransferInstruction({ source: aliceFake, destination: merchantUsdt, authority: alice, amount: 10_000_000n }),
  ]) {
    const entry = await chain.send([ix], alice);
    assert.notEqual(entry.err, null);
    assert.deepEqual(read(entry).transfers, []);
  }
  // Into the merchant's own account of the look-alike mint it goes through, and is no payment in USDT.
  const merchantFake = await chain.fund(merchant.address, chain.lookalike, 0n);
  const entry = await chain.send([transferChecked(aliceFake, chain.lookalike, merchantFake, 10_000_000n, alice)], alice);
  assert.equal(entry.err, null);
  assert.deepEqual(read(entry), { transfers: [], dropped: [], blockTime: entry.blockTime });
});

test('an inner transferChecked made by a program (the ATA program recovering tokens sent to a token account as if it were a wallet) counts', async () => {
  // A payer sends USDT to the ATA of the merchant's USDC account, as if that account were a wallet.
  const merchantUsdc = await chain.fund(merchant.address, USDC, 0n);
  const nested = await chain.ata(merchantUsdc, USDT);
  await chain.send([
    token.getCreateAssociatedTokenIdempotentInstruction({ payer: chain.payer, ata: nested, owner: merchantUsdc, mint: address(USDT) }),
    transferChecked(aliceUsdt, USDT, nested, 3_000_000n, alice),
  ]);
  const entry = await chain.send(
    [
      token.getRecoverNestedAssociatedTokenInstruction({
        nestedAssociatedAccountAddress: nested,
        nestedTokenMintAddress: address(USDT),
        destinationAssociatedAccountAddress: merchantUsdt,
        ownerAssociatedAccountAddress: merchantUsdc,
        ownerTokenMintAddress: address(USDC),
        walletAddress: merchant,
      }),
    ],
    merchant,
  );
  assert.equal(entry.err, null);
  assert.ok(entry.json.meta.innerInstructions.length > 0);
  const r = read(entry);
  assert.equal(r.transfers.length, 1);
  const [t] = r.transfers;
  assert.equal(t!.raw, 3_000_000n);
  assert.equal(t!.sourceAccount, nested);
  assert.equal(t!.from, merchantUsdc, 'from is the owner of the paying account: here the USDC account it was nested under');
  assert.ok(t!.logIndex > 0 && t!.logIndex < 1000, `an inner position under instruction 0: ${t!.logIndex}`);
});
