import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { EventsStore } from '../events/events-store.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import type { DestinationsService } from '../destinations/destinations-service.js';
import { createTransportDeps } from '../destinations/transport-deps.js';
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
  overrides: Partial<DeliveryWorkerOptions> & {
    allowPrivate?: boolean;
    /** Sends to the URLs admins typed in, instead of the client the settings make. */
    client?: OutboundClient;
  } = {},
): DeliveryWorker {
  const { config } = ctx;
  const { allowPrivate = config.delivery.allowPrivate, client, ...options } = overrides;
  const transports = createTransportDeps(config.delivery, allowPrivate);
  return new DeliveryWorker({
    db: ctx.db,
    events: ctx.eventsStore,
    secrets: ctx.secrets,
    destinations: (ids) => ctx.destinations.forSending(ids),
    replyUrlGone: (db, channelId, reason) => ctx.destinations.replyUrlGone(db, channelId, reason),
    transports: client
      ? {
          ...transports,
          client,
          close: () => {
            transports.close();
            client.close();
          },
        }
      : transports,
    log: ctx.log,
    metrics: ctx.metrics,
    concurrency: config.workerConcurrency,
    ...queueSettings(config, 'send'),
    retryScheduleMs: config.delivery.retryScheduleMs,
    ...options,
  });
}
