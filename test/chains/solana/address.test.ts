/**
 * Solana addresses: base58 of 32 bytes, the curve check that tells a wallet from a program-derived
 * account, the associated token account derivation (against real owner/mint/ATA triples recorded on
 * chain, test/fixtures/solana/, and against @solana/kit's own derivation), and the refusals a
 * merchant gets for a mint, a token account, a program or another family's address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddressEncoder, getProgramDerivedAddress, generateKeyPairSigner, address as kitAddress } from '@solana/kit';
import { decodeBase58, encodeBase58 } from '../../../src/lib/base58.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  associatedTokenAddress,
  findProgramAddress,
  isOnCurve,
  parseSolanaAddress,
  parseSolanaOwner,
  solanaAddressBytes,
  solanaAddressCodec,
  SYSTEM_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '../../../src/chains/solana/address.js';
import { NETWORKS } from '../../../src/chains/networks.js';

const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const DEVNET_USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/** Owner, mint, and the associated token account the chain holds for them (test/fixtures/solana/README.md). */
const RECORDED: Array<[string, string, string]> = [
  ['3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c', USDC, 'F77xG4vz2CJeMxxAmFW8pvPx2c5Uk75pksr6Wwx6HFhV'],
  ['FQT9SSwEZ6UUQxsmTzgt5JzjrS4M5zm13M1QiYF8TEo6', USDT, '3zWrWv3hu6fJfqpZech7sPLrF4Lm7qx1mmfMaHdJZyTP'],
  ['BXT1K8kzYXWMi6ihg7m9UqiHW4iJbJ69zumELHE9oBLe', DEVNET_USDC, '644PJ6UW8e4gQpjKdBVd4MCYasWjSECKjqd2qzdeAJY6'],
  ['BLw3RweJmfbTapJRgnPRvd962YDjFYAnVGd1p5hmZ5tP', DEVNET_USDC, 'G23tQHsbQuh3yqUBoyXDn3TwqEbbbUHAHEeUSvJaVRtA'],
];

test('base58 round-trips 32-byte keys and 64-byte signatures, leading zero bytes as leading 1s', () => {
  assert.deepEqual(decodeBase58(SYSTEM_PROGRAM_ID), new Uint8Array(32));
  assert.equal(encodeBase58(new Uint8Array(32)), SYSTEM_PROGRAM_ID);
  for (const a of [USDT, USDC, TOKEN_PROGRAM_ID]) assert.equal(encodeBase58(solanaAddressBytes(a)!), a);
  assert.equal(decodeBase58('0OIl'), undefined, 'characters outside the alphabet');
  assert.equal(solanaAddressBytes(`1${USDT}`), undefined, 'a longer spelling of other bytes is not 32 bytes');
  assert.equal(solanaAddressBytes(USDT.slice(0, 30)), undefined, 'too short for 32 bytes');
});

test('associated token accounts are derived as the chain holds them (recorded owner/mint/ATA triples)', () => {
  for (const [owner, mint, ata] of RECORDED) assert.equal(associatedTokenAddress(owner, mint), ata, `${owner} ${mint}`);
});

test('the derivation agrees with @solana/kit for random owners and both pinned mints, and its bump is the first off the curve', async () => {
  const encoder = getAddressEncoder();
  for (let i = 0; i < 20; i++) {
    const owner = (await generateKeyPairSigner()).address;
    for (const mint of [USDT, USDC]) {
      const [expected, bump] = await getProgramDerivedAddress({
        programAddress: kitAddress(ASSOCIATED_TOKEN_PROGRAM_ID),
        seeds: [encoder.encode(owner), encoder.encode(kitAddress(TOKEN_PROGRAM_ID)), encoder.encode(kitAddress(mint))],
      });
      const ours = findProgramAddress(
        [solanaAddressBytes(owner)!, solanaAddressBytes(TOKEN_PROGRAM_ID)!, solanaAddressBytes(mint)!],
        ASSOCIATED_TOKEN_PROGRAM_ID,
      );
      assert.deepEqual(ours, { address: expected, bump });
      assert.equal(isOnCurve(solanaAddressBytes(ours.address)!), false);
    }
    assert.equal(isOnCurve(solanaAddressBytes(owner)!), true, 'a key pair address is on the curve');
  }
});

test("a wallet address is accepted; a mint, an ATA, a program or another family's address is refused, saying what it is", () => {
  const owner = RECORDED[0]![0];
  assert.deepEqual(parseSolanaOwner(` ${owner} `), { ok: true, address: owner });
  assert.deepEqual(solanaAddressCodec.parse(owner), { ok: true, address: owner });
  const refused = (text: string) => {
    const r = parseSolanaOwner(text);
    assert.equal(r.ok, false, text);
    return (r as { error: string }).error;
  };
  assert.match(refused(USDT), /USDT mint of solana-mainnet, not a wallet/);
  assert.match(refused(NETWORKS['solana-devnet'].tokens[1]!.contract), /USDC mint of solana-devnet/);
  assert.match(refused(RECORDED[0]![2]), /token account or program address, not a wallet: give the owner's \(wallet\) address/);
  assert.match(refused(TOKEN_PROGRAM_ID), /SPL Token program, not a wallet/);
  assert.match(refused(SYSTEM_PROGRAM_ID), /System program/);
  assert.match(refused('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), /TRON address/);
  assert.match(refused('0xdAC17F958D2ee523a2206206994597C13D831ec7'), /EVM address/);
  assert.match(refused(owner.slice(0, 30)), /32 bytes in base58/);
  assert.match(refused(`${owner.slice(0, -1)}0`), /32 bytes in base58/);
  // Any 32-byte address is a valid provider answer, on the curve or not.
  assert.equal(parseSolanaAddress(RECORDED[0]![2]).ok, true);
  assert.equal(solanaAddressCodec.isCanonical(RECORDED[0]![2]), true);
});
