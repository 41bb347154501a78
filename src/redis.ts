import { createClient } from 'redis';
import type { Logger } from './logger.js';

export type RedisClient = ReturnType<typeof createClient>;

/** Connects to Redis; a lost connection is retried in the background and logged, never fatal. */
export async function connectRedis(url: string, log: Logger): Promise<RedisClient> {
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries) => Math.min(retries * 100, 2_000) },
  });
  client.on('error', (error: Error) =>
    log.warn({ err: { message: error.message } }, 'redis connection error'),
  );
  await client.connect();
  return client;
}
