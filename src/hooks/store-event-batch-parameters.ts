import { REJECTED_BODY_BYTES } from './rejected-body.js';
import type { ReceivingChannel } from './ingest-repo.js';
import type { EventTrace } from '../tracing/tracing.js';

/** One request for the statement: an event the pipeline let through, or a refusal to record. */
export interface IncomingEvent {
  channel: ReceivingChannel;
  /** The body as text, byte for byte; of a refused request, the start kept (see keptBody). */
  payload: string;
  /** As the event keeps them (see keptHeaders). */
  headers: Record<string, string>;
  senderIp: string | undefined;
  /** The request's dedup key, or undefined when it cannot be a duplicate. */
  dedupKey?: string | undefined;
  /**
   * The body's SHA-256 (hex), kept with a key from a header (see keyedBodyHash): a request with
   * the key and another body is no duplicate. Absent: any body with the key is a duplicate.
   */
  bodyHash?: string | undefined;
  /** The `accept_when` condition the payload did not meet: stored `filtered`, with it as `error`. */
  filteredBy?: string | undefined;
  /** The rendered thread key (see renderThreadKey); absent or null: no thread. */
  threadKey?: string | null;
  /** The code of the pipeline's refusal: the request is recorded as a `rejected` event. */
  refusal?: string;
  /** The refusal's detail as the sender got it, kept for Brain Logs. */
  refusalDetail?: string;
  /** A refusal's `payload` is only the start of its body. */
  payloadTruncated?: boolean;
  /** The request's trace (src/tracing/); absent when tracing is off. */
  trace?: EventTrace | undefined;
}

/** The statement's parameters by name; `P` gives each its position, once. */
interface BatchParameters {
  workspaceIds: string[];
  channelIds: string[];
  tokenHashes: string[];
  /** Every payload one after the other, as one text (see payloadSlices). */
  payloads: string;
  payloadStarts: number[];
  payloadBytes: number[];
  /** Of a body past REJECTED_BODY_BYTES, what an event not accepted keeps; null: all of it. */
  keptBytes: (number | null)[];
  /** The headers of each request, as one JSON array. */
  headers: string;
  senderIps: (string | null)[];
  threadKeys: (string | null)[];
  dedupKeys: (string | null)[];
  windows: (number | null)[];
  bodyHashes: (string | null)[];
  /** `repeat` or `reused` (see keyUsesInBatch), else null. */
  keyUses: (string | null)[];
  /** The condition each filtered request did not meet, else null. */
  filters: (string | null)[];
  /** The pipeline's refusals, as a JSON array of {position, code, truncated, detail}. */
  refusals: string;
  /** Each request's trace id (sampled traces only) and traceparent, else null. */
  traceIds: (string | null)[];
  traceparents: (string | null)[];
  commitDeadline: string;
  lockTimeout: string;
}

export const PARAMETER_NAMES = Object.keys({
  workspaceIds: 0,
  channelIds: 0,
  tokenHashes: 0,
  payloads: 0,
  payloadStarts: 0,
  payloadBytes: 0,
  keptBytes: 0,
  headers: 0,
  senderIps: 0,
  threadKeys: 0,
  dedupKeys: 0,
  windows: 0,
  bodyHashes: 0,
  keyUses: 0,
  filters: 0,
  refusals: 0,
  traceIds: 0,
  traceparents: 0,
  commitDeadline: 0,
  lockTimeout: 0,
} satisfies Record<keyof BatchParameters, 0>) as (keyof BatchParameters)[];

export const P = Object.fromEntries(
  PARAMETER_NAMES.map((name, i) => [name, `$${i + 1}`]),
) as Record<keyof BatchParameters, string>;

export function batchParameters(events: IncomingEvent[], deadline: number): BatchParameters {
  const uses = keyUsesInBatch(events);
  const refusals: { position: number; code: string; truncated: boolean; detail: string | null }[] =
    [];
  events.forEach(({ refusal, payloadTruncated, refusalDetail }, i) => {
    if (refusal)
      refusals.push({
        position: i + 1,
        code: refusal,
        truncated: !!payloadTruncated,
        detail: refusalDetail ?? null,
      });
  });
  return {
    workspaceIds: events.map((e) => e.channel.workspace_id),
    channelIds: events.map((e) => e.channel.id),
    tokenHashes: events.map((e) => e.channel.webhook_token_hash),
    // Not a text[] (the driver escapes array elements in JavaScript, a character at a time),
    // nor a bytea (its Buffers held the receiver's memory): one text, sliced by byte offsets.
    payloads: events.map((e) => e.payload).join(''),
    ...payloadSlices(events),
    // One array of objects, each element read once.
    headers: JSON.stringify(events.map((e) => e.headers)),
    senderIps: events.map((e) => e.senderIp ?? null),
    threadKeys: events.map((e) => e.threadKey ?? null),
    dedupKeys: events.map((e) => e.dedupKey ?? null),
    windows: events.map((e) => (e.dedupKey === undefined ? null : e.channel.dedup.window_s)),
    bodyHashes: events.map((e) => e.bodyHash ?? null),
    keyUses: uses.map((use) => (use === 'repeat' || use === 'reused' ? use : null)),
    filters: events.map((e) => e.filteredBy ?? null),
    refusals: JSON.stringify(refusals),
    traceIds: events.map((e) => e.trace?.traceId ?? null),
    traceparents: events.map((e) => e.trace?.traceparent ?? null),
    commitDeadline: new Date(deadline).toISOString(),
    lockTimeout: `${Math.max(1, Math.ceil(deadline - Date.now()))}ms`,
  };
}

/**
 * Where each payload starts in the concatenated payloads' bytes (from 1), its length in bytes,
 * and, past REJECTED_BODY_BYTES, how much of it an event refused or filtered keeps (a whole
 * character).
 */
function payloadSlices(
  events: IncomingEvent[],
): Pick<BatchParameters, 'payloadStarts' | 'payloadBytes' | 'keptBytes'> {
  const payloadStarts: number[] = [];
  const payloadBytes: number[] = [];
  const keptBytes: (number | null)[] = [];
  let start = 1;
  for (const { payload, refusal } of events) {
    const bytes = Buffer.byteLength(payload);
    payloadStarts.push(start);
    payloadBytes.push(bytes);
    keptBytes.push(bytes > REJECTED_BODY_BYTES && !refusal ? keptByteLength(payload) : null);
    start += bytes;
  }
  return { payloadStarts, payloadBytes, keptBytes };
}

function keptByteLength(payload: string): number {
  // Only the start is encoded: one character past the cut, so that the byte at the cut is there
  // (each character is at least one byte), and a pair of surrogates split by the slice only
  // changes bytes past it.
  const bytes = Buffer.from(payload.slice(0, REJECTED_BODY_BYTES + 1), 'utf8');
  let end = REJECTED_BODY_BYTES;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return end;
}

/**
 * How a request of a batch uses its dedup key: `first` of the batch with it on its channel URL;
 * a `repeat` of the first (the same body, or a key not kept with its body), or the key `reused`
 * for another body, which wait for the first's verdict. Marked here rather than by a window
 * function in the statement, which cost the database more per keyed event.
 */
type KeyUse = 'none' | 'first' | 'repeat' | 'reused';

function keyUsesInBatch(events: IncomingEvent[]): KeyUse[] {
  const firstBodies = new Map<string, string | undefined>();
  return events.map(({ channel, dedupKey, bodyHash }) => {
    if (dedupKey === undefined) return 'none';
    const key = `${channel.id} ${channel.webhook_token_hash} ${dedupKey}`;
    if (!firstBodies.has(key)) {
      firstBodies.set(key, bodyHash);
      return 'first';
    }
    const firstBody = firstBodies.get(key);
    return firstBody === undefined || bodyHash === undefined || firstBody === bodyHash
      ? 'repeat'
      : 'reused';
  });
}
