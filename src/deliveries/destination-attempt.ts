import { performance } from 'node:perf_hooks';
import type { SenderDeps } from '../destinations/destination-sender.js';
import type { DestinationToSend } from '../destinations/destinations-service.js';
import { sendToDestination } from '../destinations/send-to-destination.js';
import type { JsonValue } from '../template/index.js';
import type { AttemptDeps, AttemptOutcome } from './delivery-attempt.js';
import type { ClaimedDelivery } from './queue-claim.js';
import { releaseDelivery } from './queue-release.js';
import { retryDelivery } from './queue-retry.js';
import { withDeliverySpan, type NoteOnSpan } from '../tracing/tracing.js';

/** A claimed message to a destination, ready to go. */
export interface DestinationAttempt {
  delivery: ClaimedDelivery;
  destination: DestinationToSend;
  /** The fixed message: the text, or the webhook kind's body. */
  message: string;
  /** What the destination's templated fields (`chat_id` ...) read. */
  payload: JsonValue | undefined;
}

/**
 * Sends a message to its destination once and records the outcome as reply delivery records
 * its own: delivered (with the batch of 2xx), retried on the schedule no sooner than the
 * platform asked, or failed at once when the platform's answer says no retry can help. The
 * parts of a long text taken so far are kept, so a retry sends only the rest.
 */
export function attemptDestination(
  deps: AttemptDeps & { senders: SenderDeps },
  attempt: DestinationAttempt,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  return withDeliverySpan(attempt.destination.kind, attempt.delivery, (note) =>
    sendAndRecord(deps, attempt, signal, note),
  );
}

async function sendAndRecord(
  deps: AttemptDeps & { senders: SenderDeps },
  attempt: DestinationAttempt,
  signal: AbortSignal,
  note: NoteOnSpan,
): Promise<AttemptOutcome> {
  const { delivery, destination } = attempt;
  const kind = destination.kind;
  const started = performance.now();
  let outcome;
  try {
    outcome = await sendToDestination(
      deps.senders,
      destination.settings,
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
  const log = {
    eventId: delivery.event_id,
    deliveryId: delivery.id,
    destinationId: destination.id,
  };
  let result: AttemptOutcome;
  if (outcome.outcome === 'delivered') {
    const recorded = await deps.recordDelivered({
      deliveryId: delivery.id,
      status: outcome.status,
      durationMs,
      ...shown,
    });
    result = recorded ? 'delivered' : 'lost';
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
    if (result !== 'lost')
      deps.log.warn(
        { ...log, kind, status: outcome.status, error: outcome.error },
        result === 'failed'
          ? 'destination delivery failed'
          : 'destination delivery attempt failed; retrying later',
      );
  }
  if (result !== 'lost') deps.metrics.deliveries.inc({ kind, outcome: result });
  return result;
}
