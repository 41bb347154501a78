import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../redis.js';
import { failOpenRedisStore, rateLimitLogger } from '../redis-store.js';
import { hookErrors } from './hook-errors.js';

export interface HookRateLimits {
  perSender: RequestHandler;
  perChannel: RequestHandler;
}

/**
 * Two fixed-window limits: one per sender address over all URLs, one per webhook URL. With Redis
 * the counters are shared by every instance; without it each process counts on its own.
 */
export function createHookRateLimits(
  config: Pick<Config, 'rateLimit'>,
  redis: RedisConnection | undefined,
  log: Logger,
  metrics: Metrics,
): HookRateLimits {
  const store = (limit: string): Store | undefined =>
    redis
      ? failOpenRedisStore(redis, `hookprompt:rl:${limit}:`, () =>
          metrics.rateLimitFailOpen.inc({ limit }),
        )
      : undefined;

  const common = {
    windowMs: config.rateLimit.windowMs,
    standardHeaders: 'draft-8' as const,
    legacyHeaders: false,
    // A Redis outage must not stop webhooks (nor make them wait): the events still go to the database.
    passOnStoreError: true,
    // Passed on as an error, so the receiver counts and answers it like every other refusal.
    handler: (
      _req: unknown,
      res: Parameters<RequestHandler>[1],
      next: (error: unknown) => void,
    ) => {
      next(hookErrors.rateLimited(Number(res.getHeader('Retry-After')) || 1));
    },
    logger: rateLimitLogger(log),
  };

  return {
    perSender: rateLimit({
      ...common,
      limit: config.rateLimit.perIp,
      identifier: 'sender',
      store: store('sender'),
    }),
    perChannel: rateLimit({
      ...common,
      limit: config.rateLimit.perChannel,
      identifier: 'channel',
      store: store('channel'),
      // Per URL, as senders see it: a regenerated URL starts with a fresh count, and the key
      // (the token's hash) is unique across databases sharing one Redis.
      keyGenerator: (_req, res) => String(res.locals.channel.webhook_token_hash),
    }),
  };
}
