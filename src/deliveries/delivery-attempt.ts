import { performance } from 'node:perf_hooks';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import {
  OutboundError,
  type OutboundClient,
  type OutboundResponse,
} from '../outbound/outbound-client.js';
import { answerExcerpt, urlTarget } from '../outbound/attempt-record.js';
import { SecretCutter } from '../secrets/cut-secrets.js';
import { withDeliverySpan, type NoteOnSpan } from '../tracing/tracing.js';
import { messageHeaders } from './delivery-message.js';
import { deliveryGone } from './queue-gone.js';
import type { Delivered } from './queue-delivered.js';
import type { ClaimedDelivery, ClaimedReply } from './queue-claim.js';
import { releaseDelivery } from './queue-release.js';
import { retryDelivery } from './queue-retry.js';

export interface AttemptDeps {
  db: Queryable;
  metrics: Pick<Metrics, 'deliveries' | 'deliveryDuration'>;
  client: OutboundClient;
  log: Logger;
  workerId: string;
  retryScheduleMs: readonly number[];
  /** Records a 2xx (see markDelivered); false when another worker had taken the delivery over. */
  recordDelivered: (delivered: Delivered) => Promise<boolean>;
}

/** What became of one attempt; `lost` means another worker had taken the delivery over. */
export type AttemptOutcome = 'delivered' | 'retried' | 'failed' | 'gone' | 'released' | 'lost';

/** The destination kind reply delivery is counted as in /metrics. */
const KIND = 'webhook';

/** Outcomes counted in /metrics: an attempt given back at shutdown, or recorded by another worker, is not. */
const COUNTED: ReadonlySet<AttemptOutcome> = new Set(['delivered', 'retried', 'failed', 'gone']);

/** Sends one message once and records it (see `send`), counting the outcome in /metrics. */
export async function attemptDelivery(
  deps: AttemptDeps,
  delivery: ClaimedReply,
  body: string,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  const outcome = await withDeliverySpan(KIND, delivery, (note) =>
    send(deps, delivery, body, signal, note),
  );
  if (COUNTED.has(outcome)) deps.metrics.deliveries.inc({ kind: KIND, outcome });
  return outcome;
}

/**
 * Sends one message once and records what the receiver made of it (its duration observed once
 * the answer, or the error, is in): a 2xx delivers it; a 410
 * turns the channel's delivery off and the message waits; anything else (another status, a 3xx,
 * no answer in time, a reset connection) is retried on the schedule, at least as late as a
 * `Retry-After` asks; an address that may not be reached fails it at once.
 */
async function send(
  deps: AttemptDeps,
  delivery: ClaimedReply,
  body: string,
  signal: AbortSignal,
  note: NoteOnSpan,
): Promise<AttemptOutcome> {
  const { db, log, workerId } = deps;
  const deliveryId = delivery.id;
  const secrets = delivery.previous_secret
    ? [delivery.secret, delivery.previous_secret]
    : [delivery.secret];
  // What Brain Logs shows: never the URL's query or userinfo, in the target or in the answer,
  // nor a signing secret echoed back.
  const target = urlTarget(delivery.url);
  const cutter = new SecretCutter({ urls: [delivery.url], values: secrets });
  const started = performance.now();
  const measured = () => {
    const ms = performance.now() - started;
    deps.metrics.deliveryDuration.observe({ kind: KIND }, ms / 1000);
    return ms;
  };
  let res: OutboundResponse;
  try {
    res = await deps.client.post(
      delivery.url,
      body,
      messageHeaders(delivery.webhook_id, body, secrets, new Date()),
      signal,
    );
  } catch (error) {
    if (signal.aborted) {
      return (await releaseDelivery(db, deliveryId, workerId)) ? 'released' : 'lost';
    }
    const durationMs = measured();
    if (!(error instanceof OutboundError)) throw error;
    return retry(deps, delivery, {
      status: null,
      error: cutter.cut(error.message),
      durationMs,
      notBeforeMs: 0,
      final: !error.retryable,
      target,
      answer: null,
    });
  }

  const durationMs = measured();
  note({ 'http.response.status_code': res.status });
  const cut = { ...res, bodyStart: cutter.cut(res.bodyStart) };
  const answer = answerExcerpt(cut);
  if (res.status >= 200 && res.status < 300) {
    const recorded = await deps.recordDelivered({
      deliveryId,
      status: res.status,
      durationMs,
      target,
      answer,
    });
    if (!recorded) return 'lost';
    log.info({ eventId: delivery.event_id, deliveryId, status: res.status }, 'reply delivered');
    return 'delivered';
  }
  if (res.status === 410) {
    const reason = `The reply URL answered 410 Gone on ${new Date().toISOString()}; delivery is off until an admin turns it on again.`;
    const attempt = { durationMs, target, answer };
    if (!(await deliveryGone(db, deliveryId, workerId, reason, attempt))) return 'lost';
    log.warn({ eventId: delivery.event_id, deliveryId }, 'reply URL gone; delivery turned off');
    return 'gone';
  }
  return retry(deps, delivery, {
    status: res.status,
    error: describeAnswer(cut, cutter),
    durationMs,
    notBeforeMs: res.retryAfterMs,
    final: false,
    target,
    answer,
  });
}

async function retry(
  deps: AttemptDeps,
  delivery: ClaimedDelivery,
  attempt: Parameters<typeof retryDelivery>[3],
): Promise<AttemptOutcome> {
  const state = await retryDelivery(
    deps.db,
    delivery.id,
    deps.workerId,
    attempt,
    deps.retryScheduleMs,
  );
  if (!state) return 'lost';
  const failed = state === 'failed';
  deps.log.warn(
    {
      eventId: delivery.event_id,
      deliveryId: delivery.id,
      status: attempt.status,
      error: attempt.error,
    },
    failed ? 'reply delivery failed' : 'reply delivery attempt failed; retrying later',
  );
  return failed ? 'failed' : 'retried';
}

/**
 * A non-2xx answer in words for Brain Logs: the status, where a 3xx pointed (its secrets cut
 * out), the body's start (cut already).
 */
function describeAnswer(res: OutboundResponse, cutter: SecretCutter): string {
  if (res.status >= 300 && res.status < 400) {
    const to = res.headers.location && cutter.cut(res.headers.location);
    const location = to ? ` to ${to}` : '';
    return `HTTP ${res.status}: a redirect${location}, which is not followed; set the final URL.`;
  }
  const text = res.bodyStart.replaceAll('\u0000', '\uFFFD').replace(/\s+/g, ' ').trim();
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return `HTTP ${res.status}${shown ? `: ${shown}` : ''}`;
}
