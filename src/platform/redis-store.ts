import type { Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RedisUnavailableError, type RedisConnection } from './redis.js';

/**
 * A rate-limit store in Redis that fails open: when Redis does not answer within its 500 ms,
 * `increment` throws RedisUnavailableError after calling `onFailOpen` (to be counted), and the
 * limiter, built with `passOnStoreError`, lets the request through. Whether Redis is there is
 * logged by the connection, once per change, not once per request.
 */
export function failOpenRedisStore(
  redis: RedisConnection,
  prefix: string,
  onFailOpen: () => void,
): Store {
  const inner = new RedisStore({
    prefix,
    sendCommand: (...args: string[]) => redis.sendCommand(args) as Promise<RedisReply>,
  });
  const unavailable = (error: unknown) =>
    error instanceof RedisUnavailableError
      ? error
      : new RedisUnavailableError(`Redis failed: ${(error as Error).message}`);
  return {
    prefix,
    localKeys: false,
    init: (options) => inner.init(options),
    async increment(key) {
      try {
        return await inner.increment(key);
      } catch (error) {
        onFailOpen();
        throw unavailable(error);
      }
    },
    // Lowering or clearing a count is best effort: a count Redis did not take needs no undoing.
    decrement: (key) => inner.decrement(key).catch(() => undefined),
    resetKey: (key) => inner.resetKey(key).catch(() => undefined),
    get: (key) => inner.get(key).catch(() => undefined),
  };
}

/** express-rate-limit's logger: Redis being away is already counted and logged. */
export function rateLimitLogger(log: { warn: (object: object, message: string) => void }): {
  error: (error: unknown, message?: string) => void;
  warn: (message: unknown) => void;
} {
  return {
    error: (error, message) => {
      if (error instanceof RedisUnavailableError) return;
      log.warn({ err: error }, message ?? 'rate limit error');
    },
    warn: (message) => log.warn({}, String(message)),
  };
}
