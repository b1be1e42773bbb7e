/**
 * TON addresses: every printed form of one account parses to the same raw lower-case form; the
 * friendly forms' CRC16 catches a mistyped character; a testnet-flagged form is refused on mainnet;
 * other families' addresses are named as such. The pairs of raw and friendly forms are real: toncenter
 * v3 address books recorded in github.com/cordialsys/crosschain @ 37ce3cd6ada4fd3eefe93a7b3f8686e7826ebd5b,
 * chain/ton/client_test.go (testnet wallets, hence the testnet flag), and Tether's master.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc16, parseTonAddress, payerFacingAddress, sameTonAddress, toFriendlyAddress } from '../../../src/chains/ton/address.js';
import { tonAddressCodec } from '../../../src/chains/ton/family.js';

const USDT_RAW = '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe';

test('CRC16-XMODEM has its check value', () => {
  assert.equal(crc16(Buffer.from('123456789')), 0x31c3);
});

test('recorded pairs of raw and friendly forms round-trip, testnet flag and bounce flag included', () => {
  const pairs: Array<[string, string, boolean]> = [
    ['0:237E5119FFA2A028CC4F95C9CA37566852F1DD4D3EA15704D6F791065507DE4A', '0QAjflEZ_6KgKMxPlcnKN1ZoUvHdTT6hVwTW95EGVQfeSvD5', false],
    ['0:3D340B150EAC0392F5F428ABFFDF3C33BED68468A7F7F607C4A13D8013EF56B1', 'kQA9NAsVDqwDkvX0KKv_3zwzvtaEaKf39gfEoT2AE-9Wse1G', true],
    ['0:A1A2DCA202D48FAACD016CF0FCE75332B3DFCB74C54CECDF9AB6C158BD431CE3', '0QChotyiAtSPqs0BbPD851Mys9_LdMVM7N-atsFYvUMc48Jm', false],
  ];
  for (const [raw, friendly, bounceable] of pairs) {
    const parsed = parseTonAddress(friendly, { test: true });
    assert.ok(parsed.ok, friendly);
    assert.equal(parsed.address, raw.toLowerCase());
    assert.equal(parsed.testOnly, true);
    assert.equal(parsed.form, bounceable ? 'bounceable' : 'non-bounceable');
    assert.equal(toFriendlyAddress(raw, { bounceable, testOnly: true }), friendly);
  }
  assert.equal(toFriendlyAddress(USDT_RAW, { bounceable: true }), 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs');
});

test('every form of one account is the same stored address: raw in any case, bounceable, non-bounceable, base64 and base64url', () => {
  const forms = [
    USDT_RAW,
    USDT_RAW.toUpperCase().replace('0X', '0x'),
    'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs',
    toFriendlyAddress(USDT_RAW, { bounceable: false }),
    toFriendlyAddress(USDT_RAW, { bounceable: true, urlSafe: false }),
    `  ${USDT_RAW}\n`,
  ];
  for (const f of forms) assert.deepEqual(tonAddressCodec.parse(f), { ok: true, address: USDT_RAW }, f);
  assert.ok(sameTonAddress(forms[1]!, forms[2]!));
  assert.ok(tonAddressCodec.isCanonical(USDT_RAW));
  assert.ok(!tonAddressCodec.isCanonical(forms[1]!));
  assert.ok(!tonAddressCodec.isCanonical(forms[2]!));
  assert.match(payerFacingAddress(USDT_RAW), /^UQ/);
  const master = parseTonAddress(`-1:${'ab'.repeat(32)}`);
  assert.ok(master.ok && master.address === `-1:${'ab'.repeat(32)}`);
  assert.match(toFriendlyAddress(`-1:${'ab'.repeat(32)}`, { bounceable: true }), /^Ef/);
});

test('a mistyped friendly form fails its checksum; a mixed alphabet, another length or workchain is refused', () => {
  const good = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs';
  const typo = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
  const bad = (text: string) => {
    const r = tonAddressCodec.parse(text);
    assert.equal(r.ok, false, text);
    return r.ok ? '' : r.error;
  };
  assert.match(bad(typo), /checksum/);
  assert.match(bad(good.toLowerCase()), /checksum/, 'a friendly form is case-sensitive');
  // '/' for '_' is the same form in plain base64 (the same bytes); '+' beside '_' mixes the two alphabets.
  assert.equal(tonAddressCodec.parse(good.replace('_', '/')).ok, true);
  assert.match(bad(`+${good.slice(1)}`), /mixes alphabets/);
  assert.match(bad(good.slice(1)), /48 characters/);
  assert.match(bad(`1:${'ab'.repeat(32)}`), /48 characters/);
  assert.match(bad(`0:${'ab'.repeat(31)}`), /48 characters/);
});

test('a testnet-flagged address is refused on mainnet and accepted on the devnet; other families are named', () => {
  const testnet = '0QAjflEZ_6KgKMxPlcnKN1ZoUvHdTT6hVwTW95EGVQfeSvD5';
  const refused = tonAddressCodec.parse(testnet);
  assert.equal(refused.ok, false);
  assert.match(refused.ok ? '' : refused.error, /testnet/);
  assert.equal(parseTonAddress(testnet, { test: true }).ok, true);
  const tron = tonAddressCodec.parse('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  assert.match(tron.ok ? '' : tron.error, /TRON address/);
  const evm = tonAddressCodec.parse('0xdAC17F958D2ee523a2206206994597C13D831ec7');
  assert.match(evm.ok ? '' : evm.error, /EVM address/);
});
