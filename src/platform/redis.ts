import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { createClient as CreateClient } from 'redis';
import type { Logger } from './logger.js';

/** How long Redis may take: it only counts rate limits, so nothing waits for it long. */
export const REDIS_LIMITS = {
  /** One command; past it the caller goes on without Redis (the rate limits let requests through). */
  commandMs: 500,
  /** From opening a connection to Redis answering on it. */
  readyMs: 2_000,
  /** Between a failed connection and the next attempt. */
  retryMs: 1_000,
  quitMs: 500,
} as const;

/** `ok` once Redis answers; `connecting` before the first answer; `unavailable` after a failure. */
export type RedisStatus = 'ok' | 'connecting' | 'unavailable';

/** Redis cannot be used right now; the caller carries on without it. */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
  readonly code = 'REDIS_UNAVAILABLE';
}

/** A command got no answer in time. */
class RedisTimeoutError extends RedisUnavailableError {
  override name = 'RedisTimeoutError';
}

/**
 * A client for the rate limits. node-redis 6 speaks RESP3 by default and waits 30 s before its
 * first TCP keep-alive probe; this keeps RESP2 (the replies the rate-limit scripts were written
 * for, and a Redis older than 6 has no HELLO to switch) and the 5 s probe of node-redis 5.
 */
function newClient(createClient: typeof CreateClient, url: string) {
  return createClient({
    url,
    RESP: 2,
    disableOfflineQueue: true,
    // Reconnecting is done here, with a fresh client each time (see the class comment).
    socket: {
      connectTimeout: REDIS_LIMITS.readyMs,
      reconnectStrategy: false,
      keepAliveInitialDelay: 5_000,
    },
  });
}

type Client = ReturnType<typeof newClient>;

/**
 * A command's answer within REDIS_LIMITS.commandMs. node-redis's own command timeout stops only
 * at writing the command: once written, it would wait for the answer forever.
 */
function answerWithin<T>(command: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new RedisTimeoutError(`no answer within ${REDIS_LIMITS.commandMs} ms`)),
      REDIS_LIMITS.commandMs,
    );
  });
  return Promise.race([command, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The process's Redis connection (rate-limit counters shared by every instance). Nothing ever
 * waits for Redis longer than a command's 500 ms:
 *
 * - `connect()` returns at once; start-up does not wait for Redis, and connecting goes on in the
 *   background until it succeeds.
 * - While there is no connection that has answered, commands fail at once (no offline queue).
 * - A command that gets no answer within 500 ms fails, and its connection is closed and opened
 *   anew: on a connection that lost requests, later replies could be matched to the wrong ones.
 * - A connection that does not answer within 2 s of opening (a Redis that accepts TCP and then
 *   says nothing, or is paused) is closed and tried again a second later.
 *
 * The log says once when Redis stops answering and once when it answers again; `/readyz` shows
 * `status`. Emits `ready` each time a connection starts answering.
 */
export class RedisConnection extends EventEmitter {
  private client: Client | undefined;
  /** The connected client that has answered a PING; commands go only here. */
  private usable: Client | undefined;
  private state: RedisStatus = 'connecting';
  private opened = false;
  private closing = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Lua scripts by SHA1, so that scripts need no round trip before Redis is there (see sendCommand). */
  private readonly scripts = new Map<string, string>();
  /**
   * node-redis, loaded by `connect()`: a process without REDIS_URL never loads it, and keeps
   * 4.3 MB less on its heap for every full garbage collection to mark.
   */
  private createClient: typeof CreateClient | undefined;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {
    super();
  }

  get status(): RedisStatus {
    return this.state;
  }

  get isOpen(): boolean {
    return this.opened && !this.closing;
  }

  get isReady(): boolean {
    return this.usable !== undefined;
  }

  /** Starts connecting in the background; resolves at once. */
  async connect(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    ({ createClient: this.createClient } = await import('redis'));
    if (!this.closing) this.open();
  }

  /**
   * Sends one command, as node-redis's `sendCommand` does, within 500 ms.
   * `SCRIPT LOAD` is answered here (the script's SHA1) and an `EVALSHA` that Redis does not know
   * is sent again as `EVAL`, so stores that load scripts when they are built need no Redis then.
   * @throws RedisUnavailableError when there is no connection that answers
   */
  async sendCommand(args: string[]): Promise<unknown> {
    if (args[0]?.toUpperCase() === 'SCRIPT' && args[1]?.toUpperCase() === 'LOAD') {
      const script = args[2] ?? '';
      const sha = createHash('sha1').update(script).digest('hex');
      this.scripts.set(sha, script);
      return sha;
    }
    try {
      return await this.send(args);
    } catch (error) {
      const script =
        args[0]?.toUpperCase() === 'EVALSHA' ? this.scripts.get(args[1] ?? '') : undefined;
      if (script === undefined || !String((error as Error).message).startsWith('NOSCRIPT'))
        throw error;
      return this.send(['EVAL', script, ...args.slice(2)]);
    }
  }

  /** Closes the connection within a moment, whatever Redis is doing. */
  async quit(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = this.usable = undefined;
    if (!client?.isOpen) return;
    await Promise.race([client.quit().catch(() => undefined), delay(REDIS_LIMITS.quitMs)]);
    if (client.isOpen) client.destroy();
  }

  private async send(args: string[]): Promise<unknown> {
    const client = this.usable;
    if (!client) throw new RedisUnavailableError('Redis is not available');
    try {
      return await answerWithin(client.sendCommand(args));
    } catch (error) {
      if (error instanceof RedisTimeoutError) this.giveUp(client, error);
      throw error;
    }
  }

  private open(): void {
    const client = newClient(this.createClient as typeof CreateClient, this.url);
    this.client = client;
    client.on('error', (error: Error) => this.giveUp(client, error));
    const notAnswering = setTimeout(
      () => this.giveUp(client, new Error(`no answer within ${REDIS_LIMITS.readyMs} ms`)),
      REDIS_LIMITS.readyMs,
    ).unref();
    client
      .connect()
      .then(() => answerWithin(client.sendCommand(['PING'])))
      .then(() => {
        clearTimeout(notAnswering);
        if (this.client !== client) return;
        this.usable = client;
        if (this.state !== 'ok') {
          this.log.info(
            this.state === 'unavailable'
              ? 'redis answers again; rate limits are enforced again'
              : 'redis connected',
          );
        }
        this.state = 'ok';
        this.emit('ready');
      })
      .catch((error: Error) => {
        clearTimeout(notAnswering);
        this.giveUp(client, error);
      });
  }

  /** Drops a connection that failed or stopped answering, and tries a new one a moment later. */
  private giveUp(client: Client, error: Error): void {
    if (this.client !== client) return;
    this.client = this.usable = undefined;
    if (this.state !== 'unavailable') {
      this.log.warn(
        { err: { message: error.message } },
        'redis is not answering; rate limits let requests through until it does',
      );
    }
    this.state = 'unavailable';
    if (client.isOpen) client.destroy();
    if (this.closing) return;
    this.retryTimer = setTimeout(() => this.open(), REDIS_LIMITS.retryMs).unref();
  }
}

/** A Redis connection for the rate limits; `connect()` starts it without waiting. */
export function createRedis(url: string, log: Logger): RedisConnection {
  return new RedisConnection(url, log);
}

export type RedisClient = RedisConnection;
