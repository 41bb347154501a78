import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { EventsStore } from '../events/events-store.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { OutboundClient } from '../outbound/outbound-client.js';
import { ANSWER_EXCERPT_BYTES } from '../outbound/attempt-record.js';
import type { DestinationsService } from '../destinations/destinations-service.js';
import { createSenderDeps } from '../destinations/sender-deps.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { queueSettings } from '../queue/queue-settings.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.js';

export interface DeliveryWorkerDeps {
  config: Config;
  db: Database;
  log: Logger;
  eventsStore: EventsStore;
  secrets: SecretBox;
  metrics: Metrics;
  destinations: DestinationsService;
}

/**
 * A delivery worker configured from the config; tests override single options (an address
 * policy, an id). `allowPrivate` decides the connect-time address check of its HTTP client.
 */
export function createDeliveryWorker(
  ctx: DeliveryWorkerDeps,
  overrides: Partial<DeliveryWorkerOptions> & { allowPrivate?: boolean } = {},
): DeliveryWorker {
  const { config } = ctx;
  const { allowPrivate = config.delivery.allowPrivate, ...options } = overrides;
  return new DeliveryWorker({
    db: ctx.db,
    events: ctx.eventsStore,
    secrets: ctx.secrets,
    destinations: (ids) => ctx.destinations.forSending(ids),
    senders: createSenderDeps(config.delivery, allowPrivate),
    client: new OutboundClient({
      timeoutMs: config.delivery.timeoutMs,
      allowPrivate,
      setting: 'DELIVERY_ALLOW_PRIVATE',
      // enough for the answer's excerpt Brain Logs shows with each attempt
      keepBodyBytes: ANSWER_EXCERPT_BYTES,
    }),
    log: ctx.log,
    metrics: ctx.metrics,
    concurrency: config.workerConcurrency,
    ...queueSettings(config, 'send'),
    retryScheduleMs: config.delivery.retryScheduleMs,
    ...options,
  });
}
