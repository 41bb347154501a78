import { performance } from 'node:perf_hooks';
import type { Queryable } from '../db/database.js';
import type { TransportDeps } from '../destinations/destination-transport.js';
import type { DestinationToSend } from '../destinations/destinations-service.js';
import { sendToDestination } from '../destinations/send-to-destination.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { JsonValue } from '../template/index.js';
import { withDeliverySpan, type NoteOnSpan } from '../tracing/tracing.js';
import type { Delivered } from './queue-delivered.js';
import type { ClaimedDelivery } from './queue-claim.js';
import type { GoneAttempt } from './queue-gone.js';
import { releaseDelivery } from './queue-release.js';
import { retryDelivery } from './queue-retry.js';

export interface AttemptDeps {
  db: Queryable;
  metrics: Pick<Metrics, 'deliveries' | 'deliveryDuration'>;
  transports: TransportDeps;
  log: Logger;
  workerId: string;
  retryScheduleMs: readonly number[];
  /** Records a 2xx (see markDelivered); false when another worker had taken the delivery over. */
  recordDelivered: (delivered: Delivered) => Promise<boolean>;
  /** Records a target gone (see deliveryGone); false when another worker had taken it over. */
  recordGone: (gone: GoneAttempt) => Promise<boolean>;
}

/** What became of one attempt; `lost` means another worker had taken the delivery over. */
export type AttemptOutcome = 'delivered' | 'retried' | 'failed' | 'gone' | 'released' | 'lost';

/** A claimed message to its target (the reply URL or a destination), ready to go. */
export interface MessageAttempt {
  delivery: ClaimedDelivery;
  target: DestinationToSend;
  /** The fixed message: the text, or the webhook kind's body. */
  message: string;
  /** What the target's templated fields (`chat_id` ...) read. */
  payload: JsonValue | undefined;
}

/** The log lines of each role's attempts, as operators have always read them. */
const LOG_LINES = {
  reply: {
    delivered: 'reply delivered',
    gone: 'reply URL gone; delivery turned off',
    failed: 'reply delivery failed',
    retried: 'reply delivery attempt failed; retrying later',
  },
  destination: {
    delivered: undefined,
    gone: 'destination gone; delivery turned off',
    failed: 'destination delivery failed',
    retried: 'destination delivery attempt failed; retrying later',
  },
} as const;

/**
 * Sends a message to its target once, through the target kind's transport, and records the
 * outcome: delivered (with the batch of 2xx); gone (the target's delivery turned off, the
 * message waiting until it is on again); retried on the schedule no sooner than the receiver
 * asked; or failed at once when its answer says no retry can help. The parts of a long text
 * taken so far are kept, so a retry sends only the rest. Counted in /metrics by kind, unless
 * given back at shutdown or recorded by another worker.
 */
export function attemptDelivery(
  deps: AttemptDeps,
  attempt: MessageAttempt,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  return withDeliverySpan(attempt.target.kind, attempt.delivery, (note) =>
    sendAndRecord(deps, attempt, signal, note),
  );
}

async function sendAndRecord(
  deps: AttemptDeps,
  attempt: MessageAttempt,
  signal: AbortSignal,
  note: NoteOnSpan,
): Promise<AttemptOutcome> {
  const { delivery, target } = attempt;
  const kind = target.kind;
  const started = performance.now();
  let outcome;
  try {
    outcome = await sendToDestination(
      deps.transports,
      target.settings,
      {
        id: delivery.webhook_id,
        text: attempt.message,
        webhookBody: attempt.message,
        signingSecrets: [delivery.secret, delivery.previous_secret].filter(
          (secret): secret is string => secret !== null,
        ),
      },
      { payload: attempt.payload, partsDone: delivery.parts, signal },
    );
  } catch (error) {
    if (!signal.aborted) throw error;
    return (await releaseDelivery(deps.db, delivery.id, deps.workerId)) ? 'released' : 'lost';
  }
  const durationMs = performance.now() - started;
  deps.metrics.deliveryDuration.observe({ kind }, durationMs / 1000);
  if (outcome.status) note({ 'http.response.status_code': outcome.status });
  const shown = { target: outcome.target, answer: outcome.answer ?? null };
  let result: AttemptOutcome;
  if (outcome.outcome === 'delivered') {
    const recorded = await deps.recordDelivered({
      deliveryId: delivery.id,
      status: outcome.status,
      durationMs,
      ...shown,
    });
    result = recorded ? 'delivered' : 'lost';
  } else if (outcome.outcome === 'gone') {
    const recorded = await deps.recordGone({
      deliveryId: delivery.id,
      reason: outcome.error,
      durationMs,
      ...shown,
    });
    result = recorded ? 'gone' : 'lost';
  } else {
    const state = await retryDelivery(
      deps.db,
      delivery.id,
      deps.workerId,
      {
        status: outcome.status,
        error: outcome.error,
        durationMs,
        notBeforeMs: outcome.outcome === 'retry' ? outcome.retryAfterMs : 0,
        final: outcome.outcome === 'fail',
        parts: outcome.parts,
        ...shown,
      },
      deps.retryScheduleMs,
    );
    result = state === undefined ? 'lost' : state === 'failed' ? 'failed' : 'retried';
  }
  if (result === 'lost') return result;
  deps.metrics.deliveries.inc({ kind, outcome: result });
  const line = LOG_LINES[target.role][result as keyof (typeof LOG_LINES)['reply']];
  if (line === undefined) return result;
  const logged = {
    eventId: delivery.event_id,
    deliveryId: delivery.id,
    ...(target.id === null ? {} : { destinationId: target.id }),
    kind,
    status: outcome.status,
    ...('error' in outcome ? { error: outcome.error } : {}),
  };
  if (result === 'delivered') deps.log.info(logged, line);
  else deps.log.warn(logged, line);
  return result;
}
