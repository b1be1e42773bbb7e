/** The accounts part of the API contract: /auth/* and the Merchant (the Dashboard of /me is in src/dashboard/). */
import { emailAddress } from '../lib/email-address.js';
import { BOUNDED_TOLERANCE_PATTERN, parseTolerance, type PaymentSettings } from './underpayment.js';
import { z } from '@hono/zod-openapi';
import { Mode } from '../http/openapi.js';
import { LOCALES } from '../lib/i18n.js';
import type { Config } from '../config.js';
import { isSupportStaff } from './support-staff.js';
import { markupPercentSchema } from '../pricing/pricing.schemas.js';
import type { Merchant } from './merchants.repo.js';

const Email = emailAddress().openapi({ example: 'owner@shop.example' });
const CaptchaToken = z.string().max(2048).optional().openapi({ description: 'Required when GET /config shows a captcha; single use' });
export const Locale = z
  .string()
  .max(35)
  .regex(/^[A-Za-z]{2,3}([_-][A-Za-z0-9]{1,8})*$/)
  .optional()
  .openapi({
    description:
      `Language of the emails sent by this request: ${LOCALES.join(', ')} ` +
      '(matched on the primary subtag, so "fr-CA" is French); anything else, or none, is English',
    example: 'en',
  });
const EmailToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/);

export const RegisterBody = z
  .strictObject({
    email: Email,
    password: z.string().min(12).max(128),
    captcha_token: CaptchaToken,
    name: z.string().max(100).optional().openapi({ description: 'Business display name; empty or absent = the part of the email before "@"' }),
    locale: Locale,
  })
  .openapi('RegisterRequest');

export const LoginBody = z
  .strictObject({ email: Email, password: z.string().min(10).max(128), captcha_token: CaptchaToken, locale: Locale })
  .openapi('LoginRequest');

export const VerifyEmailBody = z
  .strictObject({ token: EmailToken.openapi({ description: 'From the #verify= fragment of the emailed link' }) })
  .openapi('VerifyEmailRequest');

export const ForgotBody = z.strictObject({ email: Email, captcha_token: CaptchaToken, locale: Locale }).openapi('ForgotPasswordRequest');

const ResetToken = EmailToken.openapi({ description: 'From the #reset= fragment of the emailed link' });

export const ResetBody = z
  .strictObject({
    token: ResetToken,
    password: z.string().min(12).max(128),
    revoke_api_keys_and_webhooks: z.boolean().optional().openapi({
      description:
        'Also revoke every API key and deactivate every webhook of the account (their pending deliveries are cancelled), for an owner who fears someone else held the account. Default false: integrations keep working.',
    }),
  })
  .openapi('ResetPasswordRequest');

export const SetPasswordBody = z.strictObject({ password: z.string().min(12).max(128) }).openapi('SetPasswordRequest');

export const ResetPreviewBody = z.strictObject({ token: ResetToken }).openapi('ResetPreviewRequest');

const CredentialCountsSchema = z.object({
  api_keys: z.int().min(0).openapi({ description: 'API keys neither revoked nor expired' }),
  webhooks: z.int().min(0).openapi({ description: 'Active webhooks' }),
});

export const ResetPreview = CredentialCountsSchema.openapi('ResetPreview');

export const ChangePasswordBody = z
  .strictObject({
    current_password: z.string().min(1).max(128).openapi({ description: 'The password the account signs in with today' }),
    new_password: z.string().min(12).max(128).openapi({ description: '12 to 128 characters' }),
  })
  .openapi('ChangePasswordRequest');

export const GoogleBody = z
  .strictObject({ credential: z.string().min(20).max(4096).openapi({ description: 'The ID token (JWT) from Google Identity Services' }) })
  .openapi('GoogleSignInRequest');

const CheckoutQrSchema = z.enum(['address', 'tron_uri']).openapi({
  description: 'What the checkout QR code carries: the receiving address alone (default; every wallet scans it) or a tron: URI with the amount',
  example: 'address',
});

const MarkupSchema = markupPercentSchema(
  'Markup in percent (0 to 20, at most 2 decimals) added to invoices priced in a fiat currency before rounding; a request may override it',
);
const UnderpaymentTolerance = z
  .string()
  .refine((v) => parseTolerance(v) !== undefined, 'expected a USDT amount such as "1.00" or a percentage such as "1%" (above 0, at most 100%, two decimals)')
  .nullable()
  .openapi({
    pattern: BOUNDED_TOLERANCE_PATTERN,
    description:
      'How far short of an open invoice a transfer may be and still be recorded against it as a partial payment (when its last six decimals are the ' +
      'invoice\'s and no other open invoice matches): a USDT amount ("1.00") or a percentage of the payable amount ("1%"); null = off (the default)',
    example: '1.00',
  });
const UnderpaymentAutoAccept = z.boolean().openapi({
  description: 'Such a partial payment confirms its invoice by itself (resolution "tolerance"); false (the default) = it waits for you',
  example: false,
});

export const PatchMeBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional().openapi({ example: 'Example Shop' }),
    checkout_qr: CheckoutQrSchema.optional(),
    markup_percent: MarkupSchema.optional(),
    underpayment_tolerance: UnderpaymentTolerance.optional(),
    underpayment_auto_accept: UnderpaymentAutoAccept.optional(),
  })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'give at least one of name, checkout_qr, markup_percent, underpayment_tolerance, underpayment_auto_accept',
  )
  .openapi('UpdateMerchantRequest', { minProperties: 1 });

export const MerchantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.email(),
    mode: Mode,
    support_staff: z.boolean().openapi({ description: 'True when the account is on support.staff_emails and may use the support inbox' }),
    checkout_qr: CheckoutQrSchema,
    markup_percent: MarkupSchema,
  })
  .openapi('Merchant');

/** The Merchant as GET and PATCH /me show it: with the owner's underpayment settings. */
export const OwnMerchantSchema = MerchantSchema.extend({
  underpayment_tolerance: UnderpaymentTolerance,
  underpayment_auto_accept: UnderpaymentAutoAccept,
}).openapi('OwnMerchant');

/** The underpayment settings as GET and PATCH /me show them (in `merchant`). */
export function toPaymentSettingsResponse(s: PaymentSettings) {
  return { underpayment_tolerance: s.underpaymentTolerance, underpayment_auto_accept: s.underpaymentAutoAccept };
}

export const MerchantEnvelope = z.object({ merchant: MerchantSchema }).openapi('MerchantEnvelope');

export const VerifyEmailResponse = z
  .object({
    merchant: MerchantSchema,
    password_set: z.boolean().openapi({
      description:
        'False when the account has no password: more than one registration was made for this address before it was confirmed, or the link was opened in another browser than the one that registered (one without its gw_reg cookie). No registration password is kept then; a link to choose one has been emailed, and the signed-in owner may choose one now with POST /auth/password/set',
    }),
  })
  .openapi('EmailConfirmed');

export const ResetResponse = z
  .object({
    merchant: MerchantSchema,
    revoked: CredentialCountsSchema.openapi({ description: 'What the reset revoked besides sessions (zeros unless asked)' }),
  })
  .openapi('PasswordReset');

export const TwoFactorSignedIn = z
  .object({
    merchant: MerchantSchema,
    revoked: CredentialCountsSchema.optional().openapi({
      description: 'Only when the challenge came from a password reset that asked to revoke the API keys and webhooks: what was revoked with the code',
    }),
  })
  .openapi('TwoFactorSignIn');

export const RegisterResponse = z
  .object({
    verification_required: z.literal(true),
    email: z.email(),
    email_sent: z.boolean().openapi({
      description:
        "True only when a mail went out for this request. False when the mail server refused it, or when this address was already sent a registration mail in the last 5 minutes (use that mail's link; signing in later sends a new link). The limit applies alike to every address, with or without an account.",
    }),
  })
  .openapi('Registration');

export const SessionStatus = z.object({ signed_in: z.boolean() }).openapi('SessionStatus');

export type MerchantResponse = z.infer<typeof MerchantSchema>;

/** The Merchant resource: no password hash, Google subject or internal timestamps. */
export function toMerchantResponse(merchant: Merchant, config: Config): MerchantResponse {
  return {
    id: merchant.id,
    name: merchant.name,
    email: merchant.email,
    mode: 'live',
    support_staff: isSupportStaff(config, merchant.email),
    checkout_qr: merchant.checkoutQr,
    markup_percent: merchant.markupPercent,
  };
}
