import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { createSenderDeps } from '../destinations/sender-deps.js';
import { queueSettings, queueWorkerId } from '../queue/queue-settings.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { AlertsEvaluator, type AlertsEvaluatorOptions } from './alerts-evaluator.js';
import type { AlertsService } from './alerts-service.js';

/**
 * The alerts' evaluator as configured. Notifications go out through the destinations' senders,
 * as channel destinations do: the same timeout and lease, and the same address policy
 * (DELIVERY_ALLOW_PRIVATE) for URLs admins typed in.
 */
export function createAlertsEvaluator(
  ctx: { config: Config; db: Database; log: Logger; alerts: AlertsService; secrets: SecretBox },
  overrides: Partial<AlertsEvaluatorOptions> = {},
): AlertsEvaluator {
  const { config } = ctx;
  return new AlertsEvaluator({
    db: ctx.db,
    log: ctx.log,
    senders: createSenderDeps(config.delivery),
    secrets: ctx.secrets,
    alertSecret: ctx.alerts.alertSecret,
    intervalMs: config.alertIntervalMs,
    ...queueSettings(config, 'send'),
    workerId: queueWorkerId('alerts'),
    ...overrides,
  });
}
