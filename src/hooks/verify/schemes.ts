import { sameSecret } from '../../platform/secrets.js';
import {
  checkTimestamp,
  decodeSignature,
  missingHeader,
  noSignatureMatched,
  sameSignature,
  sameSignatureText,
  SignatureFailure,
} from './signature-checks.js';
import { hmacSha256, hmacSha256Base64 } from './hmac.js';
import {
  DEFAULT_TOLERANCE_S,
  type VerificationScheme,
  type VerificationSettings,
} from '../../channels/sender-settings.js';

/** What a scheme looks at: the body as the sender wrote it (decoded), and the request headers. */
export interface SignedRequest {
  body: Buffer;
  /** A header's value by lower-case name, or undefined when absent or empty. */
  header(name: string): string | undefined;
}

/** Checks one request; throws SignatureFailure saying what is wrong. */
type SchemeCheck = (request: SignedRequest, settings: VerificationSettings, secret: string) => void;

const tolerance = (settings: VerificationSettings) => settings.tolerance_s ?? DEFAULT_TOLERANCE_S;

function required(request: SignedRequest, name: string): string {
  const value = request.header(name.toLowerCase());
  if (value === undefined) throw missingHeader(name);
  return value;
}

const WEBHOOK_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
const SVIX_NAMES = ['svix-id', 'svix-timestamp', 'svix-signature'];

const WHSEC_PREFIX = 'whsec_';

/**
 * The HMAC keys of the Standard Webhooks secrets in use, decoded once each rather than for every
 * signed request. Emptied when it reaches KEYS_KEPT, so that secrets replaced over time do not
 * pile up.
 */
const standardWebhooksKeys = new Map<string, Buffer>();
const KEYS_KEPT = 1000;

/** The HMAC key of a Standard Webhooks secret: the base64 after `whsec_`. */
function standardWebhooksKey(secret: string): Buffer {
  const known = standardWebhooksKeys.get(secret);
  if (known) return known;
  const key = Buffer.from(
    secret.startsWith(WHSEC_PREFIX) ? secret.slice(WHSEC_PREFIX.length) : secret,
    'base64',
  );
  if (key.length === 0) {
    throw new SignatureFailure(
      "This channel's secret is not a Standard Webhooks secret (whsec_...).",
    );
  }
  if (standardWebhooksKeys.size >= KEYS_KEPT) standardWebhooksKeys.clear();
  standardWebhooksKeys.set(secret, key);
  return key;
}

/**
 * Standard Webhooks (and Svix, its origin, with `svix-` header names): `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body`, keyed by the secret. Computed with node:crypto as the
 * standardwebhooks package computes it, because the package hashes in JavaScript, several times
 * slower (bench/HISTORY.md). The package still checks every secret saved (sender-schemas.ts), and
 * the tests sign with it. The timestamp is checked here so that the channel's tolerance applies.
 */
const standardWebhooks: SchemeCheck = (request, settings, secret) => {
  // Svix's names only when no Standard Webhooks name is there (and a Standard Webhooks request,
  // the usual one, is told apart by its first header).
  const prefix =
    WEBHOOK_NAMES.some((name) => request.header(name) !== undefined) ||
    !SVIX_NAMES.some((name) => request.header(name) !== undefined)
      ? 'webhook'
      : 'svix';
  const id = required(request, `${prefix}-id`);
  const timestamp = checkTimestamp(required(request, `${prefix}-timestamp`), tolerance(settings));
  const signatures = required(request, `${prefix}-signature`);
  const expected = hmacSha256Base64(
    standardWebhooksKey(secret),
    `${id}.${timestamp}.`,
    request.body,
  );
  const matched = signatures
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && sameSignatureText(entry.slice(3), expected));
  if (!matched) throw noSignatureMatched(`${prefix}-signature`);
};

const stripe: SchemeCheck = (request, settings, secret) => {
  const header = required(request, 'Stripe-Signature');
  const items = header.split(',').map((item) => {
    const at = item.indexOf('=');
    return [item.slice(0, at).trim(), item.slice(at + 1).trim()] as const;
  });
  const t = items.find(([key]) => key === 't')?.[1];
  if (t === undefined)
    throw new SignatureFailure('The Stripe-Signature header has no t= timestamp.');
  checkTimestamp(t, tolerance(settings));
  const expected = hmacSha256(secret, `${t}.`, request.body);
  const matched = items.some(
    ([key, value]) => key === 'v1' && sameSignature(decodeSignature(value, 'hex'), expected),
  );
  if (!matched) throw noSignatureMatched('Stripe-Signature');
};

const github: SchemeCheck = (request, _settings, secret) => {
  const header = required(request, 'X-Hub-Signature-256');
  const given = header.startsWith('sha256=')
    ? decodeSignature(header.slice(7), 'hex')
    : Buffer.alloc(0);
  if (!sameSignature(given, hmacSha256(secret, request.body)))
    throw noSignatureMatched('X-Hub-Signature-256');
};

const shopify: SchemeCheck = (request, _settings, secret) => {
  const given = decodeSignature(required(request, 'X-Shopify-Hmac-Sha256').trim(), 'base64');
  if (!sameSignature(given, hmacSha256(secret, request.body)))
    throw noSignatureMatched('X-Shopify-Hmac-Sha256');
};

const slack: SchemeCheck = (request, settings, secret) => {
  const signature = required(request, 'X-Slack-Signature');
  const timestamp = required(request, 'X-Slack-Request-Timestamp').trim();
  checkTimestamp(timestamp, tolerance(settings));
  const given = signature.startsWith('v0=')
    ? decodeSignature(signature.slice(3), 'hex')
    : Buffer.alloc(0);
  if (!sameSignature(given, hmacSha256(secret, `v0:${timestamp}:`, request.body)))
    throw noSignatureMatched('X-Slack-Signature');
};

const hmacHeader: SchemeCheck = (request, settings, secret) => {
  const name = settings.header as string;
  const value = required(request, name).trim();
  const signature = value.toLowerCase().startsWith('sha256=') ? value.slice(7) : value;
  const given = decodeSignature(signature, settings.encoding ?? 'hex');
  if (!sameSignature(given, hmacSha256(secret, request.body))) throw noSignatureMatched(name);
};

const headerSecret: SchemeCheck = (request, settings, secret) => {
  const name = settings.header as string;
  if (!sameSecret(required(request, name), secret))
    throw new SignatureFailure(`The ${name} header does not hold this channel's secret.`);
};

/** The one table of schemes: each checks a request its own way. */
export const SCHEMES: Record<Exclude<VerificationScheme, 'none'>, SchemeCheck> = {
  'standard-webhooks': standardWebhooks,
  stripe,
  github,
  shopify,
  slack,
  'hmac-sha256': hmacHeader,
  'header-secret': headerSecret,
};

/** Throws SignatureFailure unless the request is signed as the channel's verification asks. */
export function verifyRequest(
  request: SignedRequest,
  settings: VerificationSettings,
  secret: string | null,
): void {
  if (settings.scheme === 'none') return;
  // A scheme without a stored secret cannot be satisfied; the API refuses to save one anyway.
  if (!secret) throw new SignatureFailure('This channel has no verification secret set.');
  SCHEMES[settings.scheme](request, settings, secret);
}
