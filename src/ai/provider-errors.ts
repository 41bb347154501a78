import type { OutboundError } from '../outbound/outbound-client.js';
import { AiError } from './ai-provider.js';

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
 * Servers sometimes quote the key they were given in error messages; Brain Logs must not show it.
 * Scrub before shortening: a key cut in two by the shortening would no longer match.
 */
export function scrubKey(text: string, key: string | undefined): string {
  return key ? text.replaceAll(key, '[redacted]') : text;
}

/** Text from an AI server, on one line and at most 300 characters, for an error message. */
export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}
