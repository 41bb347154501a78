import { ZodError } from 'zod';
import type { Channel } from '../../channels/channels-service.js';
import { VERIFICATION_SCHEMES, type VerificationScheme } from '../../channels/sender-settings.js';
import type { FieldErrors } from '../forms.js';
import { textareaText } from '../forms.js';

/** The "Who may send" form as the page shows it: every field as text. */
export interface SenderForm {
  scheme: string;
  header: string;
  encoding: string;
  tolerance_s: string;
  allowed_ips: string;
  allowed_origins: string;
  dedup_mode: string;
  dedup_field: string;
  dedup_window_s: string;
}

/** Each scheme in the picker, and what the sender must set up for it. */
export const SCHEME_GUIDE: Record<VerificationScheme, { label: string; sender: string }> = {
  none: {
    label: 'Anyone with the URL',
    sender: 'Nothing: the webhook URL is the only key. Regenerate it if it leaks.',
  },
  'standard-webhooks': {
    label: 'Standard Webhooks (Svix and compatible senders)',
    sender:
      'Paste the endpoint’s signing secret (whsec_…) here. The sender signs with webhook-id, webhook-timestamp and webhook-signature (or the svix- headers).',
  },
  stripe: {
    label: 'Stripe',
    sender:
      'Add the webhook URL as an endpoint in Stripe (Developers → Webhooks) and paste its Signing secret (whsec_…) here.',
  },
  github: {
    label: 'GitHub',
    sender:
      'In the repository’s Settings → Webhooks: Payload URL = the webhook URL, Content type = application/json, and paste this same secret into the Secret field.',
  },
  shopify: {
    label: 'Shopify',
    sender:
      'Create the webhook with format JSON and paste the key Shopify signs with (shown under Settings → Notifications → Webhooks, or your app’s client secret) here.',
  },
  slack: {
    label: 'Slack',
    sender:
      'Paste the app’s Signing Secret (Basic Information → App Credentials) here. Slack signs a timestamp: requests older than the tolerance are refused.',
  },
  'hmac-sha256': {
    label: 'HMAC-SHA256 in a header',
    sender:
      'The sender puts the HMAC-SHA256 of the body, keyed with this secret, in the header named below (hex or base64; a sha256= prefix is fine).',
  },
  'header-secret': {
    label: 'Shared secret in a header',
    sender:
      'The sender adds the header named below with this secret as its value (for tools that cannot sign, such as an automation platform’s custom headers).',
  },
};

export const SCHEME_CHOICES = VERIFICATION_SCHEMES.map((scheme) => ({
  scheme,
  ...SCHEME_GUIDE[scheme],
}));

/**
 * Which schemes each of the form's signature fields applies to: the page shows a field only
 * for those (all of them without JavaScript, each labelled with its schemes).
 */
export const SCHEME_FIELDS: Record<'secret' | 'header' | 'encoding' | 'tolerance_s', string[]> = {
  secret: VERIFICATION_SCHEMES.filter((scheme) => scheme !== 'none'),
  header: ['hmac-sha256', 'header-secret'],
  encoding: ['hmac-sha256'],
  tolerance_s: ['standard-webhooks', 'stripe', 'slack'],
};

export function senderFormOf(channel: Channel): SenderForm {
  const { verification, dedup } = channel;
  return {
    scheme: verification.scheme,
    header: verification.header ?? '',
    encoding: verification.encoding ?? 'hex',
    tolerance_s: String(verification.tolerance_s ?? ''),
    allowed_ips: channel.allowed_ips.join('\n'),
    allowed_origins: channel.allowed_origins.join('\n'),
    dedup_mode: dedup.mode,
    dedup_field: dedup.field ?? '',
    dedup_window_s: String(dedup.window_s),
  };
}

export function senderFormFrom(body: unknown): SenderForm & { secret: string } {
  const fields = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) => {
    const value = fields[name];
    return typeof value === 'string' ? textareaText(value).trim() : '';
  };
  return {
    scheme: text('scheme'),
    header: text('header'),
    encoding: text('encoding'),
    tolerance_s: text('tolerance_s'),
    secret: text('secret'),
    allowed_ips: text('allowed_ips'),
    allowed_origins: text('allowed_origins'),
    dedup_mode: text('dedup_mode'),
    dedup_field: text('dedup_field'),
    dedup_window_s: text('dedup_window_s'),
  };
}

/**
 * The channel changes the form asks for, in the API's shape (so the same validation applies).
 * Members that do not belong to the chosen scheme or mode are left out rather than refused:
 * the form keeps every field on the page whatever is chosen.
 */
export function senderChangesOf(form: SenderForm & { secret: string }): Record<string, unknown> {
  const number = (text: string) => (/^\d+$/.test(text) ? Number(text) : text);
  const scheme = form.scheme as VerificationScheme;
  const namedHeader = scheme === 'hmac-sha256' || scheme === 'header-secret';
  const timestamped = scheme === 'standard-webhooks' || scheme === 'stripe' || scheme === 'slack';
  const keyed = form.dedup_mode === 'header' || form.dedup_mode === 'payload';
  return {
    verification: {
      scheme,
      ...(namedHeader ? { header: form.header } : {}),
      ...(scheme === 'hmac-sha256' && form.encoding ? { encoding: form.encoding } : {}),
      ...(timestamped && form.tolerance_s ? { tolerance_s: number(form.tolerance_s) } : {}),
      ...(form.secret && scheme !== 'none' ? { secret: form.secret } : {}),
    },
    allowed_ips: form.allowed_ips.split(/[\s,]+/).filter(Boolean),
    allowed_origins: form.allowed_origins.split(/[\s,]+/).filter(Boolean),
    dedup: {
      mode: form.dedup_mode,
      ...(keyed ? { field: form.dedup_field } : {}),
      window_s: number(form.dedup_window_s),
    },
  };
}

const FORM_FIELDS: Record<string, string> = {
  'verification.scheme': 'scheme',
  'verification.header': 'header',
  'verification.encoding': 'encoding',
  'verification.tolerance_s': 'tolerance_s',
  'verification.secret': 'secret',
  allowed_ips: 'allowed_ips',
  allowed_origins: 'allowed_origins',
  'dedup.mode': 'dedup_mode',
  'dedup.field': 'dedup_field',
  'dedup.window_s': 'dedup_window_s',
};

/** A refused change, message by form field. */
export function senderFieldErrors(error: ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    const field = FORM_FIELDS[path.slice(0, 2).join('.')] ?? FORM_FIELDS[path[0] ?? ''] ?? 'scheme';
    errors[field] ??= issue.message;
  }
  return errors;
}
