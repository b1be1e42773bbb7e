/**
 * A litesvm rig: the real SPL Token and Associated Token Account programs run the transactions, and
 * each one is written to a Ledger in the two shapes `getTransaction` answers: `json` (the compiled
 * message as sent, litesvm's inner instructions and logs, token balances read from the accounts
 * before and after) and `jsonParsed` (account keys as objects; Token transfer and transferChecked
 * parsed as the RPC's parser prints them, with the instruction data decoded by @solana-program/token,
 * another implementation than the reader's; other instructions in the partially decoded form).
 * The pinned mints are placed at the solana-devnet registry's addresses; a look-alike mint is a
 * fresh key pair's.
 */
import { LiteSVM, type FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import * as token from '@solana-program/token';
import { NETWORKS } from '../../../src/chains/networks.js';
import { TOKEN_PROGRAM_ID } from '../../../src/chains/solana/address.js';
import { SOLANA_GENESIS_HASHES } from '../../../src/chains/solana/reader.js';
import { Ledger, type LedgerTransaction } from './ledger.js';

const base58 = getBase58Decoder();
const base58Encoder = getBase58Encoder();
const network = NETWORKS['solana-devnet'];
export const USDT = network.tokens.find((t) => t.symbol === 'USDT')!.contract;
export const USDC = network.tokens.find((t) => t.symbol === 'USDC')!.contract;

interface Balance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string };
}

function uiAmount(raw: bigint, decimals: number) {
  const s = raw.toString().padStart(decimals + 1, '0');
  const text = `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '') || '0';
  return { amount: raw.toString(), decimals, uiAmount: raw === 0n ? null : Number(text), uiAmountString: text };
}

export class SvmChain {
  readonly svm = new LiteSVM();
  readonly ledger = new Ledger(SOLANA_GENESIS_HASHES['solana-devnet']);
  slot = 100n;
  private constructor(
    readonly payer: KeyPairSigner,
    readonly lookalike: Address,
  ) {}

  static async start(): Promise<SvmChain> {
    const payer = await generateKeyPairSigner();
    const chain = new SvmChain(payer, (await generateKeyPairSigner()).address);
    chain.svm.airdrop(payer.address, lamports(100_000_000_000n));
    for (const mint of [USDT, USDC, chain.lookalike]) chain.placeMint(address(mint));
    return chain;
  }

  /** A mint account at a chosen address, with the payer as mint authority. */
  private placeMint(mint: Address): void {
    const data = token.getMintEncoder().encode({ mintAuthority: this.payer.address, supply: 0n, decimals: 6, isInitialized: true, freezeAuthority: null });
    this.svm.setAccount({
      address: mint,
      data: new Uint8Array(data),
      executable: false,
      lamports: lamports(1_461_600n),
      programAddress: address(TOKEN_PROGRAM_ID),
      space: 82n,
    });
  }

  async wallet(sol = 1_000_000_000n): Promise<KeyPairSigner> {
    const w = await generateKeyPairSigner();
    this.svm.airdrop(w.address, lamports(sol));
    return w;
  }

  async ata(owner: Address, mint: string): Promise<Address> {
    return (await token.findAssociatedTokenPda({ owner, mint: address(mint), tokenProgram: token.TOKEN_PROGRAM_ADDRESS }))[0];
  }

  /** Creates `owner`'s ATA for `mint` (paid by the payer) and mints `amount` into it. */
  async fund(owner: Address, mint: string, amount: bigint): Promise<Address> {
    const ata = await this.ata(owner, mint);
    await this.send([
      token.getCreateAssociatedTokenIdempotentInstruction({ payer: this.payer, ata, owner, mint: address(mint) }),
      token.getMintToInstruction({ mint: address(mint), token: ata, mintAuthority: this.payer, amount }),
    ]);
    return ata;
  }

  /** The token accounts among `keys`, decoded from their data (mint, owner, amount), by index. */
  private tokenAccounts(keys: readonly Address[]): Balance[] {
    const out: Balance[] = [];
    keys.forEach((key, accountIndex) => {
      const acc = this.svm.getAccount(key);
      if (!acc.exists || acc.programAddress !== TOKEN_PROGRAM_ID || acc.data.length !== 165) return;
      const t = token.getTokenDecoder().decode(acc.data);
      out.push({ accountIndex, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM_ID, uiTokenAmount: uiAmount(t.amount, 6) });
    });
    return out;
  }

  /** Runs a transaction in the current slot (then moves to the next) and writes it to the ledger, failed or not. */
  async send(instructions: Instruction[], feePayer: KeyPairSigner = this.payer): Promise<LedgerTransaction> {
    this.svm.warpToSlot(this.slot);
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: 1_000_000n }, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as any;
    const keys: Address[] = compiled.staticAccounts;
    const preBalances = keys.map((k) => Number(this.svm.getBalance(k) ?? 0n));
    const pre = this.tokenAccounts(keys);
    const result = this.svm.sendTransaction(tx);
    const failed = 'err' in result ? (result as FailedTransactionMetadata) : undefined;
    const meta: TransactionMetadata = failed ? failed.meta() : (result as TransactionMetadata);
    const signature = base58.decode(tx.signatures[feePayer.address]!);
    const entry = this.record(signature, compiled, keys, {
      err: failed ? errorJson(failed) : null,
      preBalances,
      postBalances: keys.map((k) => Number(this.svm.getBalance(k) ?? 0n)),
      preTokenBalances: pre,
      postTokenBalances: this.tokenAccounts(keys),
      meta,
    });
    this.ledger.add(entry);
    this.svm.expireBlockhash();
    this.slot++;
    return entry;
  }

  private record(signature: string, compiled: any, keys: Address[], m: any): LedgerTransaction {
    const h = compiled.header;
    const signer = (i: number) => i < h.numSignerAccounts;
    const writable = (i: number) => (signer(i) ? i < h.numSignerAccounts - h.numReadonlySignerAccounts : i < keys.length - h.numReadonlyNonSignerAccounts);
    const instructions = compiled.instructions.map((ix: any) => ({
      programIdIndex: ix.programAddressIndex,
      accounts: ix.accountIndices ?? [],
      data: base58.decode(ix.data ?? new Uint8Array()),
      stackHeight: 1,
    }));
    const inner = (m.meta as TransactionMetadata)
      .innerInstructions()
      .map((list, index) => ({
        index,
        instructions: list.map((i) => ({
          programIdIndex: i.instruction().programIdIndex(),
          accounts: [...i.instruction().accounts()],
          data: base58.decode(i.instruction().data()),
          stackHeight: i.stackHeight(),
        })),
      }))
      .filter((g) => g.instructions.length > 0);
    const blockTime = this.ledger.blockTime(this.slot);
    const meta = {
      err: m.err,
      status: m.err === null ? { Ok: null } : { Err: m.err },
      fee: 5000 * h.numSignerAccounts,
      preBalances: m.preBalances,
      postBalances: m.postBalances,
      innerInstructions: inner,
      logMessages: m.meta.logs(),
      preTokenBalances: m.preTokenBalances,
      postTokenBalances: m.postTokenBalances,
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: Number(m.meta.computeUnitsConsumed()),
    };
    const message = {
      accountKeys: keys,
      header: {
        numRequiredSignatures: h.numSignerAccounts,
        numReadonlySignedAccounts: h.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: h.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: compiled.lifetimeToken,
      instructions,
      addressTableLookups: [],
    };
    const json = { slot: Number(this.slot), blockTime, version: 0, meta, transaction: { signatures: [signature], message } };
    const parsedIx = (ix: any) => toParsed(ix, keys);
    const parsed = {
      ...json,
      meta: { ...meta, loadedAddresses: undefined, innerInstructions: inner.map((g) => ({ index: g.index, instructions: g.instructions.map(parsedIx) })) },
      transaction: {
        signatures: [signature],
        message: {
          ...message,
          accountKeys: keys.map((pubkey, i) => ({ pubkey, signer: signer(i), writable: writable(i), source: 'transaction' })),
          instructions: instructions.map(parsedIx),
        },
      },
    };
    return { signature, slot: this.slot, blockTime, err: m.err, json, parsed, accounts: [...keys] };
  }
}

/** A compiled instruction as jsonParsed prints it: Token transfers parsed, the rest partially decoded. */
function toParsed(ix: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }, keys: Address[]): Record<string, unknown> {
  const programId = keys[ix.programIdIndex]!;
  const accounts = ix.accounts.map((i) => keys[i]!);
  const bytes = new Uint8Array(base58Encoder.encode(ix.data));
  if (programId === TOKEN_PROGRAM_ID && (bytes[0] === 3 || bytes[0] === 12)) {
    const checked = bytes[0] === 12;
    const data = checked ? token.getTransferCheckedInstructionDataDecoder().decode(bytes) : token.getTransferInstructionDataDecoder().decode(bytes);
    const [source, second, third, fourth, ...rest] = accounts;
    const authorityAt = checked ? fourth : third;
    const signers = checked ? rest : [fourth, ...rest].filter((a) => a !== undefined);
    // The RPC's parser: more accounts than the instruction names make the authority a multisig and the rest its signers.
    const authority = signers.length > 0 ? { multisigAuthority: authorityAt, signers } : { authority: authorityAt };
    const info = checked
      ? { source, mint: second, destination: third, ...authority, tokenAmount: uiAmount(data.amount, (data as unknown as { decimals: number }).decimals) }
      : { source, destination: second, ...authority, amount: data.amount.toString() };
    return { program: 'spl-token', programId, parsed: { type: checked ? 'transferChecked' : 'transfer', info }, stackHeight: ix.stackHeight };
  }
  return { programId, accounts, data: ix.data, stackHeight: ix.stackHeight };
}

/** litesvm's transaction error in the RPC's JSON form, e.g. {"InstructionError":[0,{"Custom":1}]}. */
function errorJson(failed: FailedTransactionMetadata): unknown {
  const err = failed.err() as any;
  if (typeof err === 'number') return String(err);
  if ('index' in err && typeof err.err === 'function') {
    const inner = err.err();
    return { InstructionError: [err.index, typeof inner === 'number' ? inner : 'code' in inner ? { Custom: inner.code } : String(inner)] };
  }
  return String(err);
}
