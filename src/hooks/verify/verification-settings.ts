/** The ways a channel can check who sent a webhook (channel field `verification.scheme`). */
export const VERIFICATION_SCHEMES = [
  'none',
  'standard-webhooks',
  'stripe',
  'github',
  'shopify',
  'slack',
  'hmac-sha256',
  'header-secret',
] as const;
export type VerificationScheme = (typeof VERIFICATION_SCHEMES)[number];

/** Schemes that sign a timestamp, and so refuse requests older (or newer) than `tolerance_s`. */
export const TIMESTAMPED_SCHEMES: readonly VerificationScheme[] = [
  'standard-webhooks',
  'stripe',
  'slack',
];

/** Schemes whose header name the admin chooses (`verification.header`). */
export const NAMED_HEADER_SCHEMES: readonly VerificationScheme[] = ['hmac-sha256', 'header-secret'];

export const DEFAULT_TOLERANCE_S = 300;

/** A channel's verification as stored (the secret is kept apart and never shown). */
export interface VerificationSettings {
  scheme: VerificationScheme;
  /** The header holding the signature or secret, for `hmac-sha256` and `header-secret`. */
  header?: string;
  /** How `hmac-sha256` signatures are written; hex when absent. */
  encoding?: 'hex' | 'base64';
  /** For timestamped schemes; DEFAULT_TOLERANCE_S when absent. */
  tolerance_s?: number;
}

export const NO_VERIFICATION: VerificationSettings = { scheme: 'none' };
