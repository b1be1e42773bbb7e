import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAssetText } from '../../src/lib/assets.js';
import { LOCALES, resolveLocale, translate } from '../../src/lib/i18n.js';
import { composeAccountMail } from '../../src/accounts/account-mail.js';

const catalogue = (locale: string) => JSON.parse(readAssetText(`locales/${locale}.json`)) as Record<string, string>;

test('every locale translates every email key of the English catalogue, keeping its placeholders', () => {
  const en = catalogue('en');
  const emailKeys = Object.keys(en).filter((k) => k.startsWith('email.'));
  assert.ok(emailKeys.length >= 15);
  for (const locale of LOCALES.filter((l) => l !== 'en')) {
    const cat = catalogue(locale);
    for (const key of emailKeys) {
      assert.equal(typeof cat[key], 'string', `${locale}: ${key} is missing`);
      assert.notEqual(cat[key], en[key], `${locale}: ${key} is an English copy`);
      const placeholders = (s: string) => (s.match(/\{[a-z_]+\}/g) ?? []).sort();
      assert.deepEqual(placeholders(cat[key]!), placeholders(en[key]!), `${locale}: ${key} placeholders`);
    }
  }
});

test('translate interpolates, falls back to English, and resolveLocale matches the primary subtag', () => {
  assert.equal(translate('fr', 'email.common.greeting', { name: 'Zoé' }), 'Bonjour Zoé,');
  assert.equal(translate('zh', 'email.common.greeting', { name: '李' }), '李，您好：');
  assert.equal(translate('en', 'email.common.greeting'), 'Hello {name},', 'an absent parameter stays visible');
  assert.throws(() => translate('en', 'email.no.such.key'), /no message/);
  assert.equal(resolveLocale('fr-CA'), 'fr');
  assert.equal(resolveLocale('ZH_hans'), 'zh');
  assert.equal(resolveLocale('de'), 'en');
  assert.equal(resolveLocale(undefined), 'en');
});

test('all seven locales render both parts of every account mail with the link', () => {
  for (const locale of LOCALES) {
    for (const kind of ['verify', 'reset', 'exists'] as const) {
      const url = 'https://pay.example.com/verify#verify=' + 'A'.repeat(43);
      const mail = composeAccountMail('https://pay.example.com', { kind, locale, to: 'a@b.example', name: '<script>x</script>', url });
      assert.equal(mail.subject, translate(locale, `email.${kind}.subject`));
      assert.ok(mail.text.includes(url) && mail.html!.includes(url), `${locale} ${kind}`);
      assert.ok(mail.text.includes('<script>x</script>'), 'plain text is not escaped');
      assert.ok(!mail.html!.includes('<script>') && mail.html!.includes('&lt;script&gt;'), 'HTML is escaped');
      assert.ok(mail.html!.includes(`lang="${locale}"`));
    }
  }
});
