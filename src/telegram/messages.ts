/** The text of each Telegram notice, in the merchant's locale (plain text: nothing is parsed as markup). */
import { resolveLocale, translator } from '../lib/i18n.js';

export function renderNotice(kind: string, locale: string | null, merchantName: string, p: Record<string, string | null>, publicUrl: string): string {
  const t = translator(resolveLocale(locale));
  const v = (k: string) => p[k] ?? '';
  const order = p.order ? ` (${p.order})` : '';
  const body = (() => {
    switch (kind) {
      case 'linked':
        return t('telegram.linked', { merchant: merchantName });
      case 'confirmed':
        return t('telegram.confirmed', { invoice: v('invoice'), order, amount: v('amount') || v('payable') });
      case 'partial':
        return t('telegram.partial', { invoice: v('invoice'), order, amount: v('amount'), received: v('received'), payable: v('payable') });
      case 'late':
        return t('telegram.late', { invoice: v('invoice'), order, amount: v('amount') });
      case 'unmatched':
        return t('telegram.unmatched', { amount: v('amount'), address: v('address') });
      case 'watcher_down':
        return t('telegram.watcher_down', { since: v('since').replace('T', ' ').slice(0, 16) });
      default:
        return kind;
    }
  })();
  return kind === 'linked' ? body : `${body}\n${publicUrl.replace(/\/+$/, '')}/console`;
}
