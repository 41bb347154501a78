import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import {
  DEDUP_MODES,
  MAX_DEDUP_WINDOW_S,
  NAMED_HEADER_SCHEMES,
  parseAllowedIp,
  TIMESTAMPED_SCHEMES,
  VERIFICATION_SCHEMES,
} from './sender-settings.js';

const headerName = z
  .string()
  .trim()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name such as X-Signature')
  .transform((name) => name.toLowerCase());

/** `verification` of a create or PATCH body; `secret` is write-only. */
export const verificationSchema = z
  .strictObject({
    scheme: z.enum(VERIFICATION_SCHEMES),
    header: headerName.optional(),
    encoding: z.enum(['hex', 'base64']).optional(),
    tolerance_s: z.number().int().min(1).max(86_400).optional(),
    secret: z.string().min(1, 'must not be empty').max(1000).optional(),
  })
  .superRefine((v, ctx) => {
    const issue = (path: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: [path], message });
    if (NAMED_HEADER_SCHEMES.includes(v.scheme) && !v.header)
      issue('header', `is required for ${v.scheme}: the header the sender puts it in`);
    if (!NAMED_HEADER_SCHEMES.includes(v.scheme) && v.header)
      issue('header', 'is only for hmac-sha256 and header-secret');
    if (v.encoding && v.scheme !== 'hmac-sha256') issue('encoding', 'is only for hmac-sha256');
    if (v.tolerance_s !== undefined && !TIMESTAMPED_SCHEMES.includes(v.scheme))
      issue('tolerance_s', 'is only for standard-webhooks, stripe and slack');
    if (v.secret !== undefined && v.scheme === 'standard-webhooks') {
      const problem = standardWebhooksSecretProblem(v.secret);
      if (problem) issue('secret', problem);
    }
  });

/** Why a secret cannot be a Standard Webhooks secret, or undefined when it can. */
export function standardWebhooksSecretProblem(secret: string): string | undefined {
  try {
    new Webhook(secret);
    return undefined;
  } catch {
    return 'must be a Standard Webhooks secret: whsec_ followed by base64';
  }
}

export const allowedIpsSchema = z
  .array(
    z
      .string()
      .trim()
      .refine(
        (entry) => {
          try {
            parseAllowedIp(entry);
            return true;
          } catch {
            return false;
          }
        },
        { error: 'must be an IP address or a CIDR range such as 203.0.113.0/24 or 2001:db8::/32' },
      ),
  )
  .max(100, 'must list at most 100 addresses or ranges');

/** The most origins a channel lists; past that, `["*"]` says what is meant. */
export const MAX_ALLOWED_ORIGINS = 20;

/**
 * `allowed_origins`: web pages' origins written as a browser's `Origin` header has them, kept in
 * that form (scheme and host in lower case, no default port) so the receiver compares exactly;
 * or `["*"]` alone for any page.
 */
export const allowedOriginsSchema = z
  .array(
    z
      .string()
      .trim()
      .transform((entry, ctx) => {
        const origin = entry === '*' ? entry : browserOrigin(entry);
        if (origin === undefined)
          ctx.addIssue({
            code: 'custom',
            message: 'must be an origin such as https://shop.example.com (no path), or "*"',
          });
        return origin ?? entry;
      }),
  )
  .max(MAX_ALLOWED_ORIGINS, `must list at most ${MAX_ALLOWED_ORIGINS} origins`)
  .refine((origins) => !origins.includes('*') || origins.length === 1, {
    error: 'must be ["*"] alone to let any page send',
  });

/** `http(s)://host[:port]` as browsers send it in `Origin`, or undefined for anything else. */
export function browserOrigin(text: string): string | undefined {
  if (!/^https?:\/\/[^/?#@\\]+$/i.test(text)) return undefined;
  try {
    return new URL(text).origin;
  } catch {
    return undefined;
  }
}

/** `dedup` of a create or PATCH body; members left out keep their value (or default). */
export const dedupSchema = z.strictObject({
  mode: z.enum(DEDUP_MODES).optional(),
  field: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  window_s: z.number().int().min(1).max(MAX_DEDUP_WINDOW_S).optional(),
});

export type VerificationInput = z.infer<typeof verificationSchema>;
export type DedupInput = z.infer<typeof dedupSchema>;
