/**
 * The reply cache (ai.reply_cache_s, issue 54): what its lookup costs, and how fast it answers.
 *
 * 1. The lookup on a miss at 1 M events on PostgreSQL: bench/lib/events-fill.ts stores a month
 *    of 1 M events (10 channels), then every replied one is given a request hash, as if every
 *    channel had the cache on and no reply called a tool (the index at its largest). The
 *    worker's own statement (FIND_CACHED_REPLY) is then run for hashes nobody asked, on the
 *    busiest channel, one after another: time per lookup as the worker sees it (round trip
 *    included), and its EXPLAIN (ANALYZE, BUFFERS). Goal: at most 0.5 ms per event.
 * 2. Replies per second at 32 concurrent: the worker (the real Worker: claims, starts, the
 *    model, finishes) on PostgreSQL with a fake model answering after a fixed 200 ms. First
 *    every event asks the model (distinct payloads: the model-bound rate, 32 ÷ 0.2 s at best),
 *    then every event asks what a replied event asked (all hits). Goal: hits ≥ 5 × the first.
 *
 * Run with `npx tsx bench/reply-cache-bench.ts [--events=1000000] [--replies=640] [--rate-only]`;
 * `BENCH_DATABASE_URL` names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import type { AiProvider, AiReply } from '../src/ai/ai-provider.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { Metrics } from '../src/metrics/metrics.js';
import { FIND_CACHED_REPLY, findCachedReply } from '../src/worker/queue-reply-cache.js';
import { Worker } from '../src/worker/worker.js';
import { fillEvents } from './lib/events-fill.js';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const EVENTS = arg('events', 1_000_000);
const REPLIES = arg('replies', 640);
const LOOKUPS = 2_000;
const CONCURRENCY = 32;
const MODEL_LATENCY_MS = 200;

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const randomHash = () =>
  Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');

if (!process.argv.includes('--rate-only')) await lookupCost();
await repliesPerSecond();

async function lookupCost(): Promise<void> {
  const scratch = await createScratchDatabase(ADMIN_URL, 'replycache');
  try {
    const fillStarted = performance.now();
    const filled = await fillEvents(scratch.url, { events: EVENTS });
    // Every replied event cacheable: the index as large as it gets.
    await runSql(scratch.url, `drop index events_reply_cache_idx`);
    await runSql(
      scratch.url,
      `update events set request_hash = sha256(convert_to(id::text, 'UTF8')) where status = 'replied'`,
    );
    await runSql(
      scratch.url,
      `create index events_reply_cache_idx on events (channel_id, request_hash, completed_at)
       where request_hash is not null`,
    );
    await runSql(scratch.url, `vacuum analyze events`);
    const [hashed] = await runSql<{ n: string; bytes: string }>(
      scratch.url,
      `select count(*) filter (where request_hash is not null) as n,
              pg_relation_size('events_reply_cache_idx') as bytes from events`,
    );
    console.log(
      `1. ${filled.events} events stored (${hashed?.n} with a request hash) in ` +
        `${((performance.now() - fillStarted) / 1000).toFixed(0)} s; events_reply_cache_idx ` +
        `${(Number(hashed?.bytes) / 1e6).toFixed(1)} MB`,
    );

    const db = openPostgres({ url: scratch.url, max: 1 });
    try {
      const channel = filled.channelIds[0] as string;
      for (let i = 0; i < 200; i++) await findCachedReply(db, channel, randomHash(), 3600);
      const times: number[] = [];
      for (let i = 0; i < LOOKUPS; i++) {
        const started = performance.now();
        const found = await findCachedReply(db, channel, randomHash(), 2_592_000);
        times.push(performance.now() - started);
        if (found) throw new Error('a random hash was found');
      }
      times.sort((a, b) => a - b);
      const mean = times.reduce((sum, t) => sum + t, 0) / times.length;
      console.log(
        `   miss lookup, ${LOOKUPS} in a row on the busiest channel (round trip included): ` +
          `mean ${mean.toFixed(3)} ms, p50 ${quantile(times, 0.5).toFixed(3)} ms, ` +
          `p99 ${quantile(times, 0.99).toFixed(3)} ms (goal ≤ 0.5 ms)`,
      );
      // The database's own cost, without the round trip: 2,000 misses in one statement.
      const many = await db.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, timing off) select (
           select id from events
           where channel_id = $1 and request_hash = sha256(convert_to('miss ' || g, 'UTF8'))
             and completed_at >= now() - 2592000 * interval '1 second'
           order by completed_at desc limit 1)
         from generate_series(1, ${LOOKUPS}) g`,
        [channel],
      );
      const executed = many.rows
        .map((row) => row['QUERY PLAN'])
        .find((l) => l.startsWith('Execution Time'));
      const ms = Number(/([\d.]+) ms/.exec(executed ?? '')?.[1]);
      console.log(
        `   the same in the database alone (${LOOKUPS} misses in one statement): ` +
          `${(ms / LOOKUPS).toFixed(4)} ms per lookup`,
      );
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, buffers) ${FIND_CACHED_REPLY}`,
        [channel, randomHash(), 2_592_000],
      );
      console.log(plan.rows.map((row) => `     ${row['QUERY PLAN']}`).join('\n'));
      const [hit] = (
        await db.query<{ hash: string; channel_id: string }>(
          `select encode(request_hash, 'hex') as hash, channel_id from events
           where request_hash is not null order by completed_at desc limit 1`,
        )
      ).rows;
      const hitPlan = await db.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, buffers) ${FIND_CACHED_REPLY}`,
        [hit?.channel_id, hit?.hash, 2_592_000],
      );
      console.log('   a hit:');
      console.log(hitPlan.rows.map((row) => `     ${row['QUERY PLAN']}`).join('\n'));
    } finally {
      await db.close();
    }
  } finally {
    await scratch.drop();
  }
}

/** A model that answers every request after MODEL_LATENCY_MS, counting its calls. */
function fakeModel(): AiProvider & { calls: number } {
  const model = {
    name: 'fake',
    deterministic: false,
    calls: 0,
    async complete(): Promise<AiReply> {
      model.calls++;
      await delay(MODEL_LATENCY_MS);
      return {
        text: 'Disk on db-1 is full: clear /var/log.',
        model: 'fake-model',
        usage: {
          prompt_tokens: 60,
          completion_tokens: 12,
          total_tokens: 72,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        latencyMs: MODEL_LATENCY_MS,
      };
    },
  };
  return model;
}

async function repliesPerSecond(): Promise<void> {
  const scratch = await createScratchDatabase(ADMIN_URL, 'replycache_rate');
  const db = openPostgres({ url: scratch.url, max: 10 });
  try {
    await migrate(db);
    const [channel] = (
      await db.query<{ id: string; workspace_id: string }>(
        `with ws as (insert into workspaces (name, is_default, chat_quota)
                     values ('Bench', true, 2000000000) returning id)
         insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash, ai)
         select ws.id, 'Alerts', 'Alert: {{text}}', md5('t'), md5('h'),
                '{"model": "fake-model", "reply_cache_s": 3600}'::jsonb from ws
         returning id, workspace_id`,
      )
    ).rows as { id: string; workspace_id: string }[];
    const model = fakeModel();
    // A worker of its own per run: a stopped queue loop does not start again.
    const newWorker = () =>
      new Worker({
        db,
        provider: model,
        log: pino({ level: 'silent' }),
        metrics: new Metrics(),
        concurrency: CONCURRENCY,
        maxAttempts: 3,
        retryBaseMs: 1000,
        maxInputChars: 100_000,
        leaseMs: 120_000,
        pollIntervalMs: 1000,
        shutdownGraceMs: 5000,
        defaultModel: 'fake-model',
        pricesFor: async () => ({ priceOf: () => ({ input_per_mtok: 3, output_per_mtok: 15 }) }),
        recordSpend: async () => undefined,
      });
    // The worker runs as the service runs it (its queue loop), on a backlog stored beforehand:
    // from its start to the last event finished.
    const run = async (label: string, count: number, payload: (n: number) => string) => {
      await db.query(
        `insert into events (workspace_id, channel_id, status, payload)
         select $1, $2, 'pending', p from unnest($3::text[]) p`,
        [channel?.workspace_id, channel?.id, Array.from({ length: count }, (_, n) => payload(n))],
      );
      const calls = model.calls;
      const started = performance.now();
      const worker = newWorker();
      const running = worker.start();
      for (;;) {
        await delay(20);
        const [left] = (
          await db.query<{ n: number }>(
            `select count(*)::integer as n from events where status in ('pending', 'processing')`,
          )
        ).rows;
        if (left?.n === 0) break;
      }
      const seconds = (performance.now() - started) / 1000;
      await worker.stop();
      await running;
      const rate = count / seconds;
      console.log(
        `   ${label}: ${count} replies in ${seconds.toFixed(2)} s = ${rate.toFixed(0)} replies/s, ` +
          `${model.calls - calls} model calls`,
      );
      return rate;
    };
    console.log(
      `2. replies/s at ${CONCURRENCY} concurrent, the model answering after ${MODEL_LATENCY_MS} ms ` +
        `(at best ${(CONCURRENCY / (MODEL_LATENCY_MS / 1000)).toFixed(0)}/s when every event asks it):`,
    );
    const asked = await run('every event asks the model', REPLIES, (n) =>
      JSON.stringify({ text: `disk ${n}` }),
    );
    const served = await run('every event served from the cache', 5 * REPLIES, (n) =>
      JSON.stringify({ text: `disk ${n % 100}` }),
    );
    console.log(`   hits ÷ model-bound: ${(served / asked).toFixed(1)} × (goal ≥ 5 ×)`);
    const [counted] = (
      await db.query<{ hits: number }>(
        `select count(*)::integer as hits from events where cached_from is not null`,
      )
    ).rows;
    console.log(`   events with cached_from: ${counted?.hits}`);
  } finally {
    await db.close();
    await scratch.drop();
  }
}
