/**
 * A minimal TEP-74 jetton (a wallet and a minter), written here in FunC and compiled with
 * @ton-community/func-js, for @ton/sandbox to run: real TVM transactions, hashes, lts, aborted
 * flags and bounces for the TON readers' tests. USDT's own wallet code is not available offline, so
 * this one keeps to what the readers rely on: the wallet data is USDT's layout (status:uint4
 * balance:Coins owner master), its code is installed as a library cell as USDT's is, so a wallet's
 * address is derived exactly as for USDT (`jettonWalletAddress(master, owner, codeHash)`), and a
 * wallet accepts an `internal_transfer` only from its master or the wallet derived for the `from`
 * owner (707 otherwise), refuses a transfer above its balance (706), restores its balance when its
 * `internal_transfer` bounces, and sends the owner a `transfer_notification` with the forward payload
 * when forward_ton_amount is above zero (sent with mode 16: a send that cannot be paid aborts the
 * receipt, which then bounces back to the sender's wallet).
 *
 * Nothing here is gatewayd code: it stands in for the jetton contracts on the chain.
 */
import { compileFunc } from '@ton-community/func-js';
import { beginCell, Cell, Dictionary } from '@ton/core';

const PRIMITIVES = `
cell get_data() asm "c4 PUSH";
() set_data(cell c) impure asm "c4 POP";
cell my_code() asm "MYCODE";
slice my_address() asm "MYADDR";
builder begin_cell() asm "NEWC";
cell end_cell(builder b) asm "ENDC";
slice begin_parse(cell c) asm "CTOS";
builder store_coins(builder b, int x) asm "STVARUINT16";
builder store_slice(builder b, slice s) asm "STSLICER";
builder store_ref(builder b, cell c) asm(c b) "STREF";
builder store_maybe_ref(builder b, cell c) asm(c b) "STOPTREF";
(slice, int) load_coins(slice s) asm( -> 1 0) "LDVARUINT16";
(slice, slice) load_msg_addr(slice s) asm( -> 1 0) "LDMSGADDR";
(slice, cell) load_ref(slice s) asm( -> 1 0) "LDREF";
(slice, cell) load_maybe_ref(slice s) asm( -> 1 0) "LDOPTREF";
(slice, ()) ~skip_bits(slice s, int len) asm "SDSKIPFIRST";
int slice_bits(slice s) asm "SBITS";
int cell_hash(cell c) asm "HASHCU";
int equal_slices(slice a, slice b) asm "SDEQ";
() send_raw_message(cell msg, int mode) impure asm "SENDRAWMSG";

cell wallet_state_init(slice owner, slice master, cell code) inline {
  cell data = begin_cell().store_uint(0, 4).store_coins(0).store_slice(owner).store_slice(master).end_cell();
  return begin_cell().store_uint(0, 2).store_maybe_ref(code).store_maybe_ref(data).store_uint(0, 1).end_cell();
}

slice address_of(cell state_init) inline {
  return begin_cell().store_uint(4, 3).store_int(0, 8).store_uint(cell_hash(state_init), 256).end_cell().begin_parse();
}

() send_with_init(slice to, cell state_init, cell body) impure inline {
  cell msg = begin_cell().store_uint(0x18, 6).store_slice(to).store_coins(0)
    .store_uint(4 + 2 + 1, 1 + 4 + 4 + 64 + 32 + 1 + 1 + 1).store_ref(state_init).store_ref(body).end_cell();
  send_raw_message(msg, 64);
}
`;

const WALLET = `${PRIMITIVES}
() recv_internal(int my_balance, int msg_value, cell in_msg_full, slice in_msg_body) impure {
  slice cs = in_msg_full.begin_parse();
  int flags = cs~load_uint(4);
  slice ds = get_data().begin_parse();
  int status = ds~load_uint(4);
  int balance = ds~load_coins();
  slice owner = ds~load_msg_addr();
  slice master = ds~load_msg_addr();
  if (flags & 1) {
    in_msg_body~skip_bits(32);
    int bop = in_msg_body~load_uint(32);
    if (bop == 0x178d4519) {
      in_msg_body~skip_bits(64);
      balance += in_msg_body~load_coins();
      set_data(begin_cell().store_uint(status, 4).store_coins(balance).store_slice(owner).store_slice(master).end_cell());
    }
    return ();
  }
  slice sender = cs~load_msg_addr();
  if (slice_bits(in_msg_body) < 32) { return (); }
  int op = in_msg_body~load_uint(32);
  int query_id = in_msg_body~load_uint(64);
  if (op == 0x0f8a7ea5) {
    throw_unless(705, equal_slices(sender, owner));
    int amount = in_msg_body~load_coins();
    slice to_owner = in_msg_body~load_msg_addr();
    slice response = in_msg_body~load_msg_addr();
    cell custom = in_msg_body~load_maybe_ref();
    int forward_ton = in_msg_body~load_coins();
    balance -= amount;
    throw_unless(706, balance >= 0);
    cell init = wallet_state_init(to_owner, master, my_code());
    cell body = begin_cell().store_uint(0x178d4519, 32).store_uint(query_id, 64).store_coins(amount)
      .store_slice(owner).store_slice(response).store_coins(forward_ton).store_slice(in_msg_body).end_cell();
    send_with_init(address_of(init), init, body);
    set_data(begin_cell().store_uint(status, 4).store_coins(balance).store_slice(owner).store_slice(master).end_cell());
    return ();
  }
  if (op == 0x178d4519) {
    int amount = in_msg_body~load_coins();
    slice from = in_msg_body~load_msg_addr();
    slice response = in_msg_body~load_msg_addr();
    int forward_ton = in_msg_body~load_coins();
    slice expected = address_of(wallet_state_init(from, master, my_code()));
    throw_unless(707, equal_slices(sender, master) | equal_slices(sender, expected));
    balance += amount;
    if (forward_ton > 0) {
      cell note = begin_cell().store_uint(0x7362d09c, 32).store_uint(query_id, 64).store_coins(amount).store_slice(from).store_slice(in_msg_body).end_cell();
      cell msg = begin_cell().store_uint(0x10, 6).store_slice(owner).store_coins(forward_ton)
        .store_uint(1, 1 + 4 + 4 + 64 + 32 + 1 + 1).store_ref(note).end_cell();
      send_raw_message(msg, 1 + 16);
    }
    set_data(begin_cell().store_uint(status, 4).store_coins(balance).store_slice(owner).store_slice(master).end_cell());
    return ();
  }
  throw(0xffff);
}

(int, slice, slice) get_wallet_data() method_id {
  slice ds = get_data().begin_parse();
  ds~skip_bits(4);
  int balance = ds~load_coins();
  slice owner = ds~load_msg_addr();
  return (balance, owner, ds~load_msg_addr());
}
`;

const MINTER = `${PRIMITIVES}
() recv_internal(int my_balance, int msg_value, cell in_msg_full, slice in_msg_body) impure {
  slice cs = in_msg_full.begin_parse();
  int flags = cs~load_uint(4);
  if (flags & 1) { return (); }
  slice sender = cs~load_msg_addr();
  if (slice_bits(in_msg_body) < 32) { return (); }
  int op = in_msg_body~load_uint(32);
  slice ds = get_data().begin_parse();
  slice admin = ds~load_msg_addr();
  cell wallet_code = ds~load_ref();
  if (op == 21) {
    throw_unless(73, equal_slices(sender, admin));
    slice to_owner = in_msg_body~load_msg_addr();
    int amount = in_msg_body~load_coins();
    cell init = wallet_state_init(to_owner, my_address(), wallet_code);
    cell body = begin_cell().store_uint(0x178d4519, 32).store_uint(0, 64).store_coins(amount)
      .store_uint(0, 2).store_slice(admin).store_coins(0).store_uint(0, 1).end_cell();
    send_with_init(address_of(init), init, body);
    return ();
  }
  throw(0xffff);
}
`;

async function compile(name: string, source: string): Promise<Cell> {
  const result = await compileFunc({ targets: [`${name}.fc`], sources: { [`${name}.fc`]: source } });
  if (result.status === 'error') throw new Error(`${name}.fc: ${result.message}`);
  return Cell.fromBase64(result.codeBoc);
}

export interface JettonCode {
  /** The wallet code itself, and the library cell (type 2, its hash) a wallet's state holds instead. */
  wallet: Cell;
  walletLibrary: Cell;
  walletCodeHash: string;
  minter: Cell;
  /** The libraries cell to install in a sandbox blockchain so the library cell resolves. */
  libs: Cell;
}

let compiled: Promise<JettonCode> | undefined;

export function jettonCode(): Promise<JettonCode> {
  compiled ??= (async () => {
    const [wallet, minter] = await Promise.all([compile('wallet', WALLET), compile('minter', MINTER)]);
    const walletLibrary = beginCell().storeUint(2, 8).storeBuffer(wallet.hash()).endCell({ exotic: true });
    const dict = Dictionary.empty(Dictionary.Keys.Buffer(32), Dictionary.Values.Cell());
    dict.set(wallet.hash(), wallet);
    return { wallet, walletLibrary, walletCodeHash: wallet.hash().toString('hex'), minter, libs: beginCell().storeDictDirect(dict).endCell() };
  })();
  return compiled;
}
