/**
 * The account mails (confirmation link, password reset link, "this address already has an
 * account"), rendered from templates/email/message.{text,html}.eta in the recipient's locale with
 * a plain-text and an HTML part. The HTML engine escapes everything it prints (names are typed by
 * users); the text part is plain text and needs no escaping. Only a confirmed owner's own name is
 * ever printed: mail to an unconfirmed address greets without a name.
 */
import { Eta } from 'eta';
import { readAssetText } from '../lib/assets.js';
import { isRtl, translator, type Locale } from '../lib/i18n.js';
import type { MailMessage, SendResult } from '../email/mailer.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config' | 'log'> & { mailer: Mailer };

export type AccountMailKind = 'verify' | 'reset' | 'exists' | PasswordNoticeKind;
/** Told to the owner after a password was added to their account or changed (docs/security.md). */
export type PasswordNoticeKind = 'password_set' | 'password_changed';

const isPasswordNotice = (kind: AccountMailKind): kind is PasswordNoticeKind => kind === 'password_set' || kind === 'password_changed';

const htmlEngine = new Eta({ autoEscape: true, autoTrim: [false, 'nl'] });
const textEngine = new Eta({ autoEscape: false, autoTrim: [false, 'nl'] });

/** Templates are program assets: read once per process. */
let templates: { html: string; text: string } | undefined;
function loadTemplates(): { html: string; text: string } {
  return (templates ??= {
    html: readAssetText('templates/email/message.html.eta'),
    text: readAssetText('templates/email/message.text.eta'),
  });
}

/** Where each mail's button leads (docs/api.md, Merchant accounts, for the two token links). */
export function accountMailUrl(publicUrl: string, kind: AccountMailKind, token?: string): string {
  const base = publicUrl.replace(/\/+$/, '');
  if (kind === 'verify') return `${base}/verify#verify=${token}`;
  if (kind === 'reset') return `${base}/reset#reset=${token}`;
  if (isPasswordNotice(kind)) return `${base}/forgot`;
  return `${base}/`;
}

/**
 * A reset mail says that the API keys outlive the reset (they never ask for a second factor, so a
 * reset, even completed with a code, leaves them as they are) and where to revoke them.
 */
function resetNotes(publicUrl: string, kind: AccountMailKind, t: ReturnType<typeof translator>): string[] {
  return kind === 'reset' ? [t('email.reset.api_keys', { url: `${publicUrl.replace(/\/+$/, '')}/console/api-keys` })] : [];
}

export interface AccountMailInput {
  kind: AccountMailKind;
  locale: Locale;
  to: string;
  /**
   * The greeting's name, or null for a greeting without one: mail to an address that has not been
   * confirmed never carries a name, since whoever typed it need not own the address.
   */
  name: string | null;
  url: string;
}

export function composeAccountMail(publicUrl: string, input: AccountMailInput): MailMessage {
  const t = translator(input.locale);
  const k = `email.${input.kind}`;
  if (isPasswordNotice(input.kind)) {
    return renderMail(publicUrl, input.locale, input.to, {
      subject: t(`${k}.subject`),
      greeting: input.name === null ? t('email.common.greeting_anonymous') : t('email.common.greeting', { name: input.name }),
      paragraphs: [t(`${k}.intro`), t('email.password_notice.action')],
      button: t('email.password_notice.button'),
      url: input.url,
      notes: [],
    });
  }
  return renderMail(publicUrl, input.locale, input.to, {
    subject: t(`${k}.subject`),
    greeting: input.name === null ? t('email.common.greeting_anonymous') : t('email.common.greeting', { name: input.name }),
    paragraphs: input.kind === 'exists' ? [t(`${k}.intro`), t(`${k}.action`)] : [t(`${k}.intro`)],
    button: t(`${k}.button`),
    url: input.url,
    notes: input.kind === 'exists' ? [t(`${k}.ignore`)] : [t(`${k}.validity`), ...resetNotes(publicUrl, input.kind, t), t(`${k}.ignore`)],
  });
}

export interface MailParts {
  subject: string;
  greeting: string;
  paragraphs: string[];
  button: string;
  url: string;
  notes: string[];
}

/** One mail of the house layout in `locale`: the HTML part escapes everything it prints. */
export function renderMail(publicUrl: string, locale: Locale, to: string, parts: MailParts): MailMessage {
  const t = translator(locale);
  const data = {
    ...parts,
    lang: locale,
    dir: isRtl(locale) ? 'rtl' : 'ltr',
    align: isRtl(locale) ? 'right' : 'left',
    linkHint: t('email.common.link_hint'),
    automated: t('email.common.automated'),
    sentBy: t('email.common.sent_by', { site: new URL(publicUrl).host }),
  };
  const { html, text } = loadTemplates();
  return {
    to,
    locale,
    subject: data.subject,
    text:
      textEngine
        .renderString(text, data)
        .replace(/\n{3,}/g, '\n\n')
        .trim() + '\n',
    html: htmlEngine.renderString(html, data),
  };
}

/** Renders and sends; the result says whether the SMTP server accepted the message. */
export async function sendAccountMail(deps: Deps, input: AccountMailInput): Promise<SendResult> {
  const result = await deps.mailer.send(composeAccountMail(deps.config.server.public_url, input));
  deps.log.info({ mail: input.kind, locale: input.locale, accepted: result.accepted }, 'account mail');
  return result;
}
