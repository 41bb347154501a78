import ipaddr from 'ipaddr.js';

/**
 * What a channel asks of its senders: how their requests are verified, which addresses may
 * send, and how duplicates are recognised. The receiver (hooks/) enforces them.
 */

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

export const DEDUP_MODES = ['auto', 'header', 'payload', 'off'] as const;
export type DedupMode = (typeof DEDUP_MODES)[number];

/** A channel's duplicate detection (channel field `dedup`). */
export interface DedupSettings {
  mode: DedupMode;
  /** The header (`header` mode) or payload path (`payload` mode) that holds the key. */
  field?: string;
  /** How long a key is remembered, in seconds. */
  window_s: number;
}

export const DEFAULT_DEDUP: DedupSettings = { mode: 'auto', window_s: 86_400 };
export const MAX_DEDUP_WINDOW_S = 2_592_000;

/** One entry of `allowed_ips` as an address range; throws when it is neither an IP nor a CIDR range. */
export function parseAllowedIp(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const [address = '', bits, ...rest] = entry.trim().split('/');
  // Only the usual notations: ipaddr.js alone would also take "10.1" or "0x0a.1" for an IPv4.
  const usual = ipaddr.IPv4.isValidFourPartDecimal(address) || ipaddr.IPv6.isValid(address);
  if (!usual || rest.length > 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits)))
    throw new Error(`${entry} is neither an IP address nor a CIDR range`);
  if (bits !== undefined) return ipaddr.parseCIDR(`${address}/${bits}`);
  const parsed = ipaddr.parse(address);
  return [parsed, parsed.kind() === 'ipv4' ? 32 : 128];
}
