import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  ipKeyGenerator,
  MemoryStore,
  type ClientRateLimitInfo,
  type Options,
  type Store,
} from 'express-rate-limit';
import type { Config } from '../platform/config.js';
import type { AppError } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../platform/redis.js';
import { failOpenRedisStore, rateLimitLogger } from '../platform/redis-store.js';
import { hookErrors } from './hook-errors.js';

/** What counts a limit's requests: express-rate-limit's MemoryStore, or our Redis store. */
export type RateCounter = Pick<Store, 'increment'>;

/** Policy strings are kept per key; past this many keys the cache starts afresh. */
const POLICY_CACHE_KEYS = 10_000;

/**
 * One fixed-window limit with its IETF draft-8 `RateLimit` / `RateLimit-Policy` headers, in the
 * format express-rate-limit gives them. The counting is the store's (express-rate-limit's own
 * stores, called directly): the middleware around them cost more than the count itself on the
 * receiver's hot path (see bench/rate-limit-bench.ts).
 */
export class HookRateLimit {
  private readonly windowSeconds: number;
  private policies = new Map<string, string>();

  constructor(
    /** The limit's name in the headers: `"sender"`, `"channel"`. */
    readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
    private readonly counter: RateCounter,
    /** A store that failed: the request goes through uncounted (Redis fails open). */
    private readonly onStoreError: (error: unknown) => void,
  ) {
    this.windowSeconds = Math.ceil(windowMs / 1000);
  }

  /**
   * Counts one request of `key` and adds this limit's headers to `res`. Returns the 429 to answer
   * when the request is past the limit; nothing (and no headers) when the store failed.
   */
  async hit(key: string, res: ServerResponse): Promise<AppError | undefined> {
    let counted: ClientRateLimitInfo;
    try {
      counted = await this.counter.increment(key);
    } catch (error) {
      this.onStoreError(error);
      return undefined;
    }
    const resetSeconds = this.resetSeconds(counted.resetTime);
    const remaining = Math.max(this.limit - counted.totalHits, 0);
    res.appendHeader('RateLimit', `"${this.name}"; r=${remaining}; t=${resetSeconds}`);
    res.appendHeader('RateLimit-Policy', this.policy(key));
    // A window that has just ended still asks for a second: `Retry-After: 0` invites a busy loop.
    return counted.totalHits > this.limit ? hookErrors.rateLimited(resetSeconds || 1) : undefined;
  }

  private resetSeconds(resetTime: Date | undefined): number {
    if (!resetTime) return this.windowSeconds;
    return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
  }

  // The same for every request of a key (its partition key is a hash): made once, then kept.
  private policy(key: string): string {
    let policy = this.policies.get(key);
    if (policy === undefined) {
      if (this.policies.size >= POLICY_CACHE_KEYS) this.policies = new Map();
      policy = `"${this.name}"; q=${this.limit}; w=${this.windowSeconds}; pk=:${partitionKey(key)}:`;
      this.policies.set(key, policy);
    }
    return policy;
  }
}

/** express-rate-limit's draft-8 partition key: the base64 of the first 12 hex digits of SHA-256. */
export function partitionKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return Buffer.from(hex).toString('base64');
}

/**
 * The per-sender key: the address, an IPv6 sender's /56 network (express-rate-limit's default).
 * An address without a colon is no IPv6 address and is its own key, as ipKeyGenerator would
 * return it, without the IPv6 regular expression it runs first on every webhook.
 */
export function senderKey(ip: string | undefined): string {
  return ip?.includes(':') ? ipKeyGenerator(ip, 56) : (ip ?? '');
}

export interface HookRateLimits {
  /** Per sender address (see `senderKey`) over all URLs. */
  perSender: HookRateLimit;
  /** Per webhook URL, keyed by the token's hash. */
  perChannel: HookRateLimit;
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
  const { windowMs } = config.rateLimit;
  const logger = rateLimitLogger(log);
  // A Redis outage must not stop webhooks (nor make them wait): the events still go to the
  // database. The store counts the outage; anything else that fails is logged.
  const passOn = (error: unknown) =>
    logger.error(error, 'rate limit store failed; the request is let through uncounted');
  const limit = (name: 'sender' | 'channel', max: number) => {
    const store: Store = redis
      ? failOpenRedisStore(redis, `hookprompt:rl:${name}:`, () =>
          metrics.rateLimitFailOpen.inc({ limit: name }),
        )
      : new MemoryStore();
    // Stores read only the window from the options they are given.
    void store.init?.({ windowMs } as Options);
    return new HookRateLimit(name, max, windowMs, store, passOn);
  };
  return {
    perSender: limit('sender', config.rateLimit.perIp),
    // Per URL, as senders see it: a regenerated URL starts with a fresh count, and the key (the
    // token's hash) is unique across databases sharing one Redis.
    perChannel: limit('channel', config.rateLimit.perChannel),
  };
}
