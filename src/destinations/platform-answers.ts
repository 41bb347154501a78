import {
  OutboundError,
  type OutboundClient,
  type OutboundResponse,
} from '../outbound/outbound-client.js';
import { answerExcerpt } from '../outbound/attempt-record.js';
import { SecretCutter, type SecretsToCut } from '../secrets/cut-secrets.js';
import type { RequestOutcome, SendOutcome } from './destination-transport.js';

/** How a transport reads one answer of its platform. */
export type ReadAnswer = (res: OutboundResponse) => RequestOutcome;

/**
 * POSTs one request and classifies what came back with `read`; no answer (a timeout, a reset
 * connection) is retried, an address that may not be reached fails at once. `secrets` are cut
 * out of every error text and of the answer's excerpt (src/secrets/cut-secrets.ts): a token
 * sits in Telegram's path and in webhook URLs, a `sig` in a Teams workflow's query.
 */
export async function postOnce(
  client: OutboundClient,
  url: string,
  body: unknown,
  headers: Record<string, string>,
  read: ReadAnswer,
  secrets: SecretsToCut,
  signal?: AbortSignal,
): Promise<RequestOutcome> {
  const cutter = new SecretCutter(secrets);
  let outcome: RequestOutcome;
  let answer: string | undefined;
  try {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const answered = await client.post(
      url,
      text,
      { 'content-type': 'application/json', ...headers },
      signal,
    );
    // Secrets are cut out of the body before anything reads it: an error quotes only the
    // body's start, and a secret the cut split would no longer be found there.
    const res = { ...answered, bodyStart: cutter.cut(answered.bodyStart) };
    outcome = read(res);
    answer = answerExcerpt(res);
  } catch (error) {
    if (!(error instanceof OutboundError) || signal?.aborted) throw error;
    outcome = error.retryable
      ? { outcome: 'retry', status: null, error: error.message, retryAfterMs: 0 }
      : { outcome: 'fail', status: null, error: error.message };
  }
  if (answer !== undefined) outcome = { ...outcome, answer };
  return outcome.outcome === 'delivered'
    ? outcome
    : { ...outcome, error: cutter.cut(outcome.error) };
}

/**
 * Sends the parts not yet taken, one request each, in order, stopping at the first that is not
 * delivered; the outcome counts the parts taken so far, and holds the last answer.
 */
export async function sendParts(
  parts: readonly string[],
  partsDone: number,
  sendOne: (part: string, index: number) => Promise<RequestOutcome>,
): Promise<SendOutcome> {
  let status = 200;
  let answer: string | undefined;
  for (let index = partsDone; index < parts.length; index++) {
    const outcome = await sendOne(parts[index] as string, index);
    if (outcome.outcome !== 'delivered') return { ...outcome, parts: index };
    ({ status, answer } = outcome);
  }
  return { outcome: 'delivered', status, parts: parts.length, ...(answer ? { answer } : {}) };
}

/** An outcome of a single request, as a message of one part. */
export const onePart = (outcome: RequestOutcome, partsDone = 0): SendOutcome =>
  outcome.outcome === 'delivered' ? { ...outcome, parts: 1 } : { ...outcome, parts: partsDone };

/** Statuses that say the URL or the credentials are wrong: no retry mends them. */
const HOPELESS = new Set([400, 401, 403, 404, 410]);

/**
 * The common reading: a 2xx is delivered; a URL or credentials refused (400, 401, 403, 404,
 * 410) fails at once; anything else (429, 5xx, a redirect, which is never followed) is retried,
 * no sooner than its `Retry-After`.
 */
export function readStatus(res: OutboundResponse, error = describeAnswer(res)): RequestOutcome {
  if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', status: res.status };
  if (HOPELESS.has(res.status)) return { outcome: 'fail', status: res.status, error };
  return { outcome: 'retry', status: res.status, error, retryAfterMs: res.retryAfterMs };
}

/** A non-2xx answer in words: its status and the start of its body. */
export function describeAnswer(res: OutboundResponse): string {
  const text = res.bodyStart.replaceAll('\u0000', '\uFFFD').replace(/\s+/g, ' ').trim();
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return `HTTP ${res.status}${shown ? `: ${shown}` : ''}`;
}

/** The answer's body as JSON, or undefined (a body cut short, or not JSON). */
export function jsonAnswer(res: OutboundResponse): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(res.bodyStart);
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `ok` of a Slack or Telegram answer. Read from the text too: an answer that echoes a long
 * message is cut at the client's `keepBodyBytes`, but `ok` comes first.
 */
export function okOf(res: OutboundResponse): boolean | undefined {
  const answer = jsonAnswer(res);
  if (typeof answer?.ok === 'boolean') return answer.ok;
  const match = /^\s*\{\s*"ok"\s*:\s*(true|false)\b/.exec(res.bodyStart);
  return match ? match[1] === 'true' : undefined;
}

/** Seconds (a number, or its text) as ms; 0 when it is not a positive number. */
export function secondsAsMs(value: unknown): number {
  const seconds = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : 0;
}
