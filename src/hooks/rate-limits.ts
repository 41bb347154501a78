import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
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
  redis: RedisClient | undefined,
  log: Logger,
): HookRateLimits {
  const store = (prefix: string): Store | undefined =>
    redis
      ? new RedisStore({
          prefix: `hookprompt:rl:${prefix}:`,
          sendCommand: (...args: string[]) => redis.sendCommand(args),
        })
      : undefined;

  const common = {
    windowMs: config.rateLimit.windowMs,
    standardHeaders: 'draft-8' as const,
    legacyHeaders: false,
    // A Redis outage must not stop webhooks: the events still go to the database.
    passOnStoreError: true,
    // Passed on as an error, so the receiver counts and answers it like every other refusal.
    handler: (
      _req: unknown,
      res: Parameters<RequestHandler>[1],
      next: (error: unknown) => void,
    ) => {
      next(hookErrors.rateLimited(Number(res.getHeader('Retry-After')) || 1));
    },
    logger: {
      error: (error: unknown, message?: string) =>
        log.warn({ err: error }, message ?? 'rate limit error'),
      warn: (message: unknown) => log.warn(String(message)),
    },
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
