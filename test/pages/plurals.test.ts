import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translator } from '../../src/pages/i18n.js';

const COUNTS = [0, 1, 2, 5, 11, 21] as const;

test('count-bearing console messages take the plural form of the page language (en, ru, ar)', () => {
  const expected: Record<'en' | 'ru' | 'ar', Record<(typeof COUNTS)[number], string>> = {
    en: { 0: '0 payments need', 1: '1 payment needs', 2: '2 payments need', 5: '5 payments need', 11: '11 payments need', 21: '21 payments need' },
    ru: { 0: '0 платежей требуют', 1: '1 платёж требует', 2: '2 платежа требуют', 5: '5 платежей требуют', 11: '11 платежей требуют', 21: '21 платёж требует' },
    ar: { 0: '0 من المدفوعات', 1: 'دفعة واحدة (1)', 2: 'دفعتان (2)', 5: '5 دفعات', 11: '11 دفعة', 21: '21 دفعة' },
  };
  for (const locale of ['en', 'ru', 'ar'] as const) {
    const t = translator(locale);
    for (const count of COUNTS) {
      const text = t('console.overview.attention', { count });
      assert.ok(text.startsWith(expected[locale][count]), `${locale} ${count}: ${text}`);
      assert.ok(!text.includes('{'), `${locale} ${count}: no placeholder left`);
    }
  }
  const en = translator('en');
  assert.equal(en('console.overview.attention', { count: '200+' }).slice(0, 20), '200+ payments need y', 'a capped count reads as its number');
  const sources = (count: number) => /fewer than \d+ sources? (is|are) that fresh/.exec(en('console.rates.intro', { count, age: 60, spread: 2 }))![0];
  assert.deepEqual(COUNTS.map(sources), [
    'fewer than 0 sources are that fresh',
    'fewer than 1 source is that fresh',
    'fewer than 2 sources are that fresh',
    'fewer than 5 sources are that fresh',
    'fewer than 11 sources are that fresh',
    'fewer than 21 sources are that fresh',
  ]);
  const ru = translator('ru');
  assert.deepEqual(
    COUNTS.map((count) => ru('console.transfers.dust_hidden', { count, threshold: '0.01' }).split(' меньше')[0]),
    ['Скрыто 0 переводов', 'Скрыт 1 перевод', 'Скрыто 2 перевода', 'Скрыто 5 переводов', 'Скрыто 11 переводов', 'Скрыт 21 перевод'],
  );
  assert.equal(translator('zh')('console.transfers.dust_hidden', { count: 1, threshold: '1' }).startsWith('已折叠 1 笔'), true);
  assert.match(translator('fr')('console.overview.attention', { count: 0 }), /^0 paiement demande/);
});
