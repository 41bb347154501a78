/**
 * Rate limiting on the webhook hot path: what counting one webhook against both limits (per
 * sender address, per webhook URL) and setting their draft-8 `RateLimit` / `RateLimit-Policy`
 * headers costs, in nanoseconds per request, for:
 *   (i)   the express-rate-limit middleware as the receiver used it (two of them);
 *   (ii)  express-rate-limit's stores called directly (MemoryStore, our fail-open RedisStore),
 *         with the headers built by src/hooks/rate-limits.ts (what the receiver uses now);
 *   (iii) rate-limiter-flexible (RateLimiterMemory, RateLimiterRedis) behind the same headers.
 * Each in memory and, with Redis, through the service's Redis connection (500 ms fail-open).
 * Requests run 64 at a time, as on a busy receiver; CPU is this process's user + system time
 * (with Redis, the round trips overlap, so CPU is the cost that matters to the receiver).
 *
 *   npx tsx bench/rate-limit-bench.ts [--requests=200000] [--redis=redis://127.0.0.1:6379]
 *                                     [--no-redis]
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import express from 'express';
import { MemoryStore, rateLimit, type Options } from 'express-rate-limit';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { createLogger } from '../src/platform/logger.js';
import { createRedis, type RedisConnection } from '../src/platform/redis.js';
import { failOpenRedisStore, rateLimitLogger } from '../src/platform/redis-store.js';
import { HookRateLimit, senderKey, type RateCounter } from '../src/hooks/rate-limits.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '200000' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    'no-redis': { type: 'boolean', default: false },
  },
});

const REQUESTS = Number(flags.requests);
const CONCURRENCY = 64;
const WINDOW_MS = 60_000;
/** Out of reach: every request is counted and let through, as on a healthy receiver. */
const LIMIT = 1_000_000_000;
const log = createLogger('warn');

/** One request in flight: an Express-shaped request and response, reused between requests. */
interface Slot {
  req: express.Request;
  res: express.Response;
  senderIp: string;
  tokenHash: string;
}

type CheckBoth = (slot: Slot) => Promise<void>;

interface Variant {
  name: string;
  store: 'memory' | 'redis';
  make: () => CheckBoth;
}

const app = express();
app.set('trust proxy', false);

function slot(index: number): Slot {
  const socket = new Socket();
  const senderIp = `198.51.100.${index % 16}`;
  Object.defineProperty(socket, 'remoteAddress', { value: senderIp });
  const req = new IncomingMessage(socket);
  req.method = 'POST';
  req.url = '/hooks/token';
  const res = new ServerResponse(req);
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  const tokenHash = `channel-${index % 8}-`.padEnd(64, '0');
  Object.assign(req, { res });
  Object.assign(res, { req, locals: { channel: { webhook_token_hash: tokenHash } } });
  return { req: req as express.Request, res: res as express.Response, senderIp, tokenHash };
}

/** (i) The middleware pair as src/hooks/rate-limits.ts configured it before the hot path. */
function middlewarePair(store: (limit: string) => RateCounter | undefined): CheckBoth {
  const common = {
    windowMs: WINDOW_MS,
    limit: LIMIT,
    standardHeaders: 'draft-8' as const,
    legacyHeaders: false,
    passOnStoreError: true,
    logger: rateLimitLogger(log),
  };
  const perSender = rateLimit({
    ...common,
    identifier: 'sender',
    store: store('sender') as Options['store'],
  });
  const perChannel = rateLimit({
    ...common,
    identifier: 'channel',
    store: store('channel') as Options['store'],
    keyGenerator: (_req, res) => String(res.locals.channel.webhook_token_hash),
  });
  const next = () => undefined;
  return async ({ req, res }) => {
    await perSender(req, res, next);
    await perChannel(req, res, next);
  };
}

/** (ii) and (iii): the receiver's limits (src/hooks/rate-limits.ts) over a counter. */
function directPair(counter: (limit: string) => RateCounter): CheckBoth {
  const fail = (error: unknown) => log.warn({ err: error }, 'store failed');
  const perSender = new HookRateLimit('sender', LIMIT, WINDOW_MS, counter('sender'), fail);
  const perChannel = new HookRateLimit('channel', LIMIT, WINDOW_MS, counter('channel'), fail);
  return async ({ req, res, senderIp, tokenHash }) => {
    // The receiver resolves the address once per request (Express's req.ip, a getter, does not).
    void req;
    await perSender.hit(senderKey(senderIp), res);
    await perChannel.hit(tokenHash, res);
  };
}

function memoryStore(): RateCounter {
  const store = new MemoryStore();
  store.init({ windowMs: WINDOW_MS } as Options);
  return store;
}

function redisStore(redis: RedisConnection, prefix: string): RateCounter {
  const store = failOpenRedisStore(redis, prefix, () => undefined);
  void store.init?.({ windowMs: WINDOW_MS } as Options);
  return store;
}

/** rate-limiter-flexible answers a refusal by rejecting; both become express-rate-limit's shape. */
function flexibleCounter(limiter: RateLimiterAbstract): RateCounter {
  const counted = (res: RateLimiterRes) => ({
    totalHits: res.consumedPoints,
    resetTime: new Date(Date.now() + res.msBeforeNext),
  });
  return {
    increment: (key) =>
      limiter.consume(key).then(counted, (refused: unknown) => {
        if (refused instanceof RateLimiterRes) return counted(refused);
        throw refused;
      }),
  };
}

/**
 * rate-limiter-flexible's node-redis calls (`eval(script, { keys, arguments })`), sent through the
 * service's connection so that it gets the same 500 ms fail-open as the other Redis variants.
 */
function flexibleRedisClient(redis: RedisConnection) {
  return {
    eval: (script: string, { keys, arguments: args }: { keys: string[]; arguments: string[] }) =>
      redis.sendCommand(['EVAL', script, String(keys.length), ...keys, ...args]),
  };
}

function variants(redis: RedisConnection | undefined): Variant[] {
  const run = Date.now().toString(36);
  const prefix = (variant: string, limit: string) => `hookprompt:bench:${run}:${variant}:${limit}:`;
  const memory: Variant[] = [
    { name: 'none (harness only)', store: 'memory', make: () => async () => undefined },
    {
      name: '(i) express-rate-limit middleware',
      store: 'memory',
      make: () => middlewarePair(() => undefined),
    },
    {
      name: '(ii) MemoryStore direct + our headers',
      store: 'memory',
      make: () => directPair(memoryStore),
    },
    {
      name: '(iii) RateLimiterMemory + our headers',
      store: 'memory',
      make: () =>
        directPair(() =>
          flexibleCounter(new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 })),
        ),
    },
  ];
  if (!redis) return memory;
  return [
    ...memory,
    {
      name: '(i) express-rate-limit middleware',
      store: 'redis',
      make: () => middlewarePair((limit) => redisStore(redis, prefix('erl', limit))),
    },
    {
      name: '(ii) fail-open RedisStore direct + our headers',
      store: 'redis',
      make: () => directPair((limit) => redisStore(redis, prefix('direct', limit))),
    },
    {
      name: '(iii) RateLimiterRedis + our headers',
      store: 'redis',
      make: () =>
        directPair((limit) =>
          flexibleCounter(
            new RateLimiterRedis({
              storeClient: flexibleRedisClient(redis),
              useRedisPackage: true,
              keyPrefix: prefix('flexible', limit),
              points: LIMIT,
              duration: WINDOW_MS / 1000,
            }),
          ),
        ),
    },
  ];
}

/** Runs `count` requests, CONCURRENCY at a time, each slot's headers cleared between them. */
async function drive(check: CheckBoth, slots: Slot[], count: number): Promise<void> {
  let started = 0;
  const loop = async (slot: Slot) => {
    while (started < count) {
      started++;
      slot.res.removeHeader('RateLimit');
      slot.res.removeHeader('RateLimit-Policy');
      await check(slot);
    }
  };
  await Promise.all(slots.map(loop));
}

async function measure(variant: Variant, requests: number) {
  const check = variant.make();
  const slots = Array.from({ length: CONCURRENCY }, (_, i) => slot(i));
  await drive(check, slots, Math.min(20_000, requests)); // JIT, connection, scripts
  const headers = slots[0]?.res.getHeaders();
  globalThis.gc?.();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await drive(check, slots, requests);
  const wallNs = Number(process.hrtime.bigint() - started);
  const cpu = process.cpuUsage(cpuBefore);
  return {
    ...variant,
    cpuNs: ((cpu.user + cpu.system) * 1000) / requests,
    wallNs: wallNs / requests,
    headers,
  };
}

async function connectRedis(): Promise<RedisConnection | undefined> {
  if (flags['no-redis']) return undefined;
  const redis = createRedis(flags.redis, log);
  await redis.connect();
  const ready = new Promise((resolve) => redis.once('ready', resolve));
  const timeout = new Promise((resolve) => setTimeout(resolve, 3000, 'timeout').unref());
  if ((await Promise.race([ready, timeout])) === 'timeout') {
    console.warn(`Redis at ${flags.redis} did not answer: measuring the memory stores only`);
    await redis.quit();
    return undefined;
  }
  return redis;
}

async function main(): Promise<void> {
  const redis = await connectRedis();
  const results = [];
  for (const variant of variants(redis)) {
    const requests = variant.store === 'redis' ? Math.ceil(REQUESTS / 4) : REQUESTS;
    const result = await measure(variant, requests);
    console.log(
      `${result.store.padEnd(6)} ${result.name.padEnd(48)} ${result.cpuNs.toFixed(0).padStart(7)} ns CPU/req ${result.wallNs.toFixed(0).padStart(7)} ns wall/req`,
    );
    results.push(result);
  }
  await redis?.quit();
  const harness = results[0]?.cpuNs ?? 0;
  console.log(
    `\n${REQUESTS} requests in memory (${Math.ceil(REQUESTS / 4)} with Redis), ${CONCURRENCY} at a time, ` +
      `Node ${process.versions.node}; both limits counted per request.\n`,
  );
  console.log('| store | variant | CPU ns/req | minus harness | wall ns/req |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of results) {
    console.log(
      `| ${r.store} | ${r.name} | ${r.cpuNs.toFixed(0)} | ${(r.cpuNs - harness).toFixed(0)} | ${r.wallNs.toFixed(0)} |`,
    );
  }
  console.log('\nheaders of the last variant:', results.at(-1)?.headers);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
