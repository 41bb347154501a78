import type { OutboundError } from '../outbound/outbound-client.js';
import { SecretCutter } from '../secrets/cut-secrets.js';
import { AiError } from './ai-provider.js';
import type { ProviderPause } from './provider-pause.js';
import { parseRetryAfter } from './retry-after.js';

/**
 * The AiError of a call that got no answer: the server did not answer in time or could not be
 * reached. Both are worth asking again, and both let a fallback provider be asked.
 */
export function unansweredError(error: OutboundError, timeoutMs: number, host: string): AiError {
  const message =
    error.kind === 'timeout'
      ? `The AI server did not answer within ${timeoutMs} ms.`
      : `Could not reach the AI server at ${host}: ${error.reason}.`;
  return new AiError(message, true, undefined, { unanswered: true });
}

/**
 * Servers sometimes quote the key they were given in error messages, escaped or not; Brain Logs
 * must not show it, nor what the base URL's userinfo or query hold. Cut before shortening: a key
 * cut in two by the shortening would no longer match.
 */
export function keyCutter(key: string | undefined, baseUrl: URL): SecretCutter {
  return new SecretCutter({ values: [key], urls: [baseUrl.href] }, '[redacted]');
}

/** Text from an AI server, on one line and at most 300 characters, for an error message. */
export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/** Which HTTP statuses of a provider's protocol are worth asking again, and which ask for a breath. */
export interface StatusRules {
  retryable: (status: number) => boolean;
  backPressure: (status: number) => boolean;
}

/**
 * The AiError of an answer outside 2xx, `detail` being the server's own words (scrubbed). A
 * back-pressure status's `Retry-After` also holds back this process's other calls to the
 * provider for a moment (`pause`), and the event waits for all of it.
 */
export function statusError(
  status: number,
  retryAfter: string | null,
  detail: string,
  rules: StatusRules,
  pause: ProviderPause,
): AiError {
  const retryable = rules.retryable(status);
  const verb = retryable ? 'failed' : 'refused the request';
  const waitMs = rules.backPressure(status) ? parseRetryAfter(retryAfter) : undefined;
  if (waitMs !== undefined) pause.pauseFor(waitMs);
  const asked = waitMs === undefined ? '' : ` It asked to wait ${Math.ceil(waitMs / 1000)} s.`;
  return new AiError(
    `The AI server ${verb} (HTTP ${status}): ${detail}${asked}`,
    retryable,
    waitMs,
    {
      unanswered: false,
      httpStatus: status,
    },
  );
}
