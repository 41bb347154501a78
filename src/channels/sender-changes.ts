import { ZodError } from 'zod';
import {
  standardWebhooksSecretProblem,
  type DedupInput,
  type VerificationInput,
} from './sender-schemas.js';
import {
  DEFAULT_DEDUP,
  NO_VERIFICATION,
  type DedupSettings,
  type VerificationSettings,
} from './sender-settings.js';

/** A channel's sender settings as stored; `secret` only where it is needed to check a change. */
export interface StoredSenderSettings {
  verification: VerificationSettings;
  secret: string | null;
  dedup: DedupSettings;
}

/** What a create or PATCH changes of the sender settings; absent members stay as they are. */
export interface SenderChanges {
  verification?: VerificationSettings;
  /** A new verification secret; absent keeps the stored one. */
  secret?: string;
  allowedIps?: string[];
  allowedOrigins?: string[];
  dedup?: DedupSettings;
}

export const NEW_CHANNEL_SENDERS: StoredSenderSettings = {
  verification: NO_VERIFICATION,
  secret: null,
  dedup: DEFAULT_DEDUP,
};

/**
 * Applies `verification`, `allowed_ips`, `allowed_origins` and `dedup` of a request to what is stored, refusing
 * combinations the receiver could never satisfy (a scheme without a secret, a dedup mode
 * without its field) with a 400 naming the member, like any other invalid field.
 */
export function senderChanges(
  stored: StoredSenderSettings,
  input: {
    verification?: VerificationInput;
    allowed_ips?: string[];
    allowed_origins?: string[];
    dedup?: DedupInput;
  },
): SenderChanges {
  const changes: SenderChanges = {
    allowedIps: input.allowed_ips,
    allowedOrigins: input.allowed_origins,
  };
  const problems: { path: string[]; message: string }[] = [];

  if (input.verification) {
    const { secret, ...settings } = input.verification;
    changes.verification = withoutUndefined(settings);
    changes.secret = secret;
    const effective = secret ?? stored.secret;
    if (settings.scheme !== 'none' && !effective) {
      problems.push({
        path: ['verification', 'secret'],
        message: `is required for ${settings.scheme}: the secret the sender signs with`,
      });
    } else if (settings.scheme === 'standard-webhooks' && secret === undefined && effective) {
      const problem = standardWebhooksSecretProblem(effective);
      if (problem)
        problems.push({ path: ['verification', 'secret'], message: `(the stored one) ${problem}` });
    }
  }

  if (input.dedup) {
    const dedup: DedupSettings = { ...stored.dedup, ...withoutUndefined(input.dedup) };
    if (dedup.mode === 'auto' || dedup.mode === 'off') delete dedup.field;
    else if (!dedup.field) {
      problems.push({ path: ['dedup', 'field'], message: `is required for mode ${dedup.mode}` });
    } else if (dedup.mode === 'header' && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(dedup.field)) {
      problems.push({ path: ['dedup', 'field'], message: 'must be an HTTP header name' });
    } else if (dedup.mode === 'payload' && /\{\{|\}\}/.test(dedup.field)) {
      problems.push({ path: ['dedup', 'field'], message: 'must be a path such as order.id' });
    }
    if (dedup.mode === 'header' && dedup.field) dedup.field = dedup.field.toLowerCase();
    changes.dedup = dedup;
  }

  if (problems.length) {
    throw new ZodError(problems.map((p) => ({ code: 'custom', input: undefined, ...p })));
  }
  return changes;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
