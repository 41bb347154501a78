import { performance } from 'node:perf_hooks';
import { AiError, type AiProvider } from '../ai/ai-provider.js';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics, ReplyOutcome } from '../metrics/metrics.js';
import { parsePayload, renderTemplate } from '../template/index.js';
import type { ClaimedEvent } from './queue-claim.js';
import { finishEvent, type FinalOutcome } from './queue-finish.js';
import { releaseEvent } from './queue-release.js';
import { retryEvent } from './queue-retry.js';
import { startAttempt } from './queue-start-attempt.js';
import { storableText } from './storable-text.js';

export interface ProcessDeps {
  db: Queryable;
  provider: AiProvider;
  log: Logger;
  metrics: Metrics;
  workerId: string;
  leaseMs: number;
  maxAttempts: number;
  retryBaseMs: number;
}

/** What became of a claimed event; `lost` means another worker had taken it over. */
export type ProcessOutcome = ReplyOutcome | 'released' | 'lost';

/**
 * Answers one claimed event: renders the channel's template with the payload, asks the AI, and
 * stores the result. `signal` aborts the AI call when the worker shuts down; the event is then
 * given back to the queue. Database errors are thrown: the event keeps its lease and is taken
 * again once it ends.
 */
export async function processEvent(
  deps: ProcessDeps,
  event: ClaimedEvent,
  signal: AbortSignal,
): Promise<ProcessOutcome> {
  const { db, log, workerId } = deps;
  const eventId = event.id;
  const finish = async (outcome: FinalOutcome): Promise<ProcessOutcome> => {
    if (!(await finishEvent(db, eventId, workerId, outcome))) return lost(deps, eventId);
    deps.metrics.replies.inc({ outcome: outcome.status });
    return outcome.status;
  };

  if (event.attempts >= deps.maxAttempts) {
    // Its last allowed call was cut short (the worker holding it died): give up, as a retry would.
    log.warn({ eventId, attempts: event.attempts }, 'event failed: no attempts left');
    return finish({
      status: 'failed',
      error:
        event.error ??
        `No reply after ${event.attempts} attempts: the last AI call was interrupted.`,
    });
  }

  let prompt: string;
  try {
    prompt = storableText(renderTemplate(event.template, parsePayload(event.payload)));
  } catch (error) {
    // Accepted events were parsed on arrival, so this means the stored payload was altered.
    log.error({ eventId, err: error }, 'event failed: stored payload unreadable');
    return finish({
      status: 'failed',
      error: storableText(`The stored payload is not valid JSON: ${messageOf(error)}`),
    });
  }

  if (prompt.trim() === '') {
    log.info({ eventId }, 'event skipped: the prompt is empty');
    return finish({ status: 'skipped', prompt });
  }

  const attempts = await startAttempt(db, eventId, workerId, prompt, deps.leaseMs);
  if (attempts === undefined) return lost(deps, eventId);

  const started = performance.now();
  let reply: string;
  try {
    reply = await deps.provider.complete(prompt, signal);
    deps.metrics.aiLatency.observe({ result: 'ok' }, (performance.now() - started) / 1000);
  } catch (error) {
    if (signal.aborted) {
      log.info({ eventId }, 'event released: shutting down');
      return (await releaseEvent(db, eventId, workerId)) ? 'released' : lost(deps, eventId);
    }
    deps.metrics.aiLatency.observe({ result: 'error' }, (performance.now() - started) / 1000);
    // Anything but an AiError is unexpected; it may pass, and max attempts bounds the retries.
    const aiError =
      error instanceof AiError ? error : new AiError(`Unexpected error: ${messageOf(error)}`, true);
    const message = storableText(aiError.message);
    if (aiError.retryable && attempts < deps.maxAttempts) {
      log.warn({ eventId, attempts, error: message }, 'AI call failed; retrying later');
      if (!(await retryEvent(db, eventId, workerId, message, deps.retryBaseMs)))
        return lost(deps, eventId);
      deps.metrics.replies.inc({ outcome: 'retried' });
      return 'retried';
    }
    const final = aiError.retryable ? `${message} Gave up after ${attempts} attempts.` : message;
    log.warn({ eventId, attempts, error: final }, 'event failed');
    return finish({ status: 'failed', error: final });
  }

  const outcome = await finish({ status: 'replied', reply: storableText(reply) });
  if (outcome === 'replied') log.info({ eventId, attempts }, 'event replied');
  return outcome;
}

function lost(deps: ProcessDeps, eventId: string): ProcessOutcome {
  deps.log.warn(
    { eventId },
    'event was taken over by another worker after its lease ran out; result dropped',
  );
  return 'lost';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
