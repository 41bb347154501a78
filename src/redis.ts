import { createClient } from 'redis';
import type { Logger } from './logger.js';

export type RedisClient = ReturnType<typeof createClient>;

/**
 * A Redis client, not yet connected (`connect()` is the caller's, at start-up). A lost connection
 * is retried in the background and logged, never fatal.
 */
export function createRedis(url: string, log: Logger): RedisClient {
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries) => Math.min(retries * 100, 2_000) },
    // While Redis is away, commands fail at once instead of waiting for it to come back: the
    // rate limits then let requests through rather than leaving senders without an answer.
    disableOfflineQueue: true,
  });
  client.on('error', (error: Error) =>
    log.warn({ err: { message: error.message } }, 'redis connection error'),
  );
  return client;
}
