/**
 * Brain Logs and the queue at one million events, on a real PostgreSQL.
 *
 * Loads 1,000,000 events (10 channels, 30 days, 0.1 % still pending) into a scratch database
 * with generate_series, then prints the plan (EXPLAIN ANALYZE, BUFFERS) and the median time of
 * the statements the service really sends (captured from EventsService and claimEvents):
 *   1. the first page of one channel in a one-hour window,
 *   2. a page deep in one channel's range (after 50,000 newer events),
 *   3. the first page of the whole workspace, no filter,
 *   4. the queue claim of a batch of 8 (rolled back, so every run claims the same events).
 *
 * Run with `npx tsx bench/events-scale.ts` (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, names the server; the scratch database
 * hookprompt_bench_scale is dropped at the end unless --keep is given).
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Database, Queryable } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { encodeCursor } from '../src/events/events-cursor.js';
import { EventsService, type EventFilter } from '../src/events/events-service.js';
import { claimEvents } from '../src/worker/queue-claim.js';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCRATCH = 'hookprompt_bench_scale';
const EVENTS = 1_000_000;
const CHANNELS = 10;
const RUNS = 25;
const keep = process.argv.includes('--keep');

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const scratchUrl = new URL(SERVER);
scratchUrl.pathname = `/${SCRATCH}`;

await admin(`drop database if exists ${SCRATCH} with (force)`);
await admin(`create database ${SCRATCH}`);
const db = openPostgres({ url: scratchUrl.toString(), max: 2 });

try {
  await migrate(db);
  const workspaceId = await load(db);
  const events = new EventsService(db);
  const channelId = (await db.query<{ id: string }>('select min(id) as id from channels')).rows[0]
    ?.id as string;

  const firstPage: EventFilter = {
    channelId,
    from: new Date('2024-01-15T12:00:00Z'),
    to: new Date('2024-01-15T13:00:00Z'),
  };
  await report('1. one channel, one-hour window, first page', (q) =>
    new EventsService(q).list(workspaceId, firstPage),
  );

  const deep = await db.query<{ at: string; id: string }>(
    `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id from events
     where channel_id = $1 order by received_at desc, id desc offset 50000 limit 1`,
    [channelId],
  );
  const cursor = encodeCursor({
    receivedAt: deep.rows[0]?.at as string,
    id: deep.rows[0]?.id as string,
  });
  await report('2. one channel, page after 50,000 newer events', (q) =>
    new EventsService(q).list(workspaceId, { channelId, cursor }),
  );

  await report('3. whole workspace, first page', (q) => new EventsService(q).list(workspaceId, {}));

  await report(
    '4. queue claim, batch of 8 (rolled back)',
    (q) => claimEvents(q, 'bench', 8, 60_000),
    { rollback: true },
  );

  const check = await events.list(workspaceId, firstPage);
  console.log(
    `(first page holds ${check.data.length} events; next_cursor ${check.next_cursor ? 'set' : 'null'})`,
  );
} finally {
  await db.close();
  if (!keep) await admin(`drop database if exists ${SCRATCH} with (force)`);
}

/** 1M events over 30 days of January 2024, round-robin over the channels; every 1000th pending. */
async function load(target: Database): Promise<string> {
  const started = performance.now();
  const workspace = await target.query<{ id: string }>(
    `insert into workspaces (name, chat_quota, is_default) values ('Bench', 2000000000, true) returning id`,
  );
  const workspaceId = workspace.rows[0]?.id as string;
  const channels = await target.query<{ first: string }>(
    `with added as (
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
       select $1, 'Channel ' || n, 'Order {{order.id}} for {{customer.name}}', md5(n::text), md5('h' || n)
       from generate_series(1, $2::integer) n
       returning id
     )
     select min(id) as first from added`,
    [workspaceId, CHANNELS],
  );
  await target.query(
    `insert into events (workspace_id, channel_id, received_at, status, payload, prompt, reply, attempts, run_at, completed_at)
     select $1, $4::bigint + n % $2,
            timestamptz '2024-01-01' + (n * (30 * 86400.0 / $3)) * interval '1 second',
            s.status,
            '{"order":{"id":' || n || ',"total":' || (n % 997) || '.50,"currency":"EUR"},"customer":{"name":"Customer ' || (n % 5000) || '","email":"c' || n || '@example.com"}}',
            case when s.status = 'replied' then 'Order ' || n || ' for Customer ' || (n % 5000) end,
            case when s.status = 'replied' then 'Thanks! Order ' || n || ' is confirmed and will ship within two days.' end,
            case when s.status = 'replied' then 1 else 0 end,
            timestamptz '2024-01-01' + (n * (30 * 86400.0 / $3)) * interval '1 second',
            case when s.status = 'replied' then timestamptz '2024-01-01' + (n * (30 * 86400.0 / $3)) * interval '1 second' end
     from generate_series(1, $3::integer) n
     cross join lateral (select case when n % 1000 = 0 then 'pending' else 'replied' end as status) s`,
    [workspaceId, CHANNELS, EVENTS, channels.rows[0]?.first],
  );
  await target.exec('vacuum analyze events');
  const size = await target.query<{ size: string }>(
    `select pg_size_pretty(pg_total_relation_size('events')) as size`,
  );
  console.log(
    `loaded ${EVENTS.toLocaleString('en')} events in ${((performance.now() - started) / 1000).toFixed(1)} s (events table with indexes: ${size.rows[0]?.size})\n`,
  );
  return workspaceId;
}

/** Captures the statement `work` sends, prints its EXPLAIN ANALYZE, then times it over RUNS runs. */
async function report(
  title: string,
  work: (q: Queryable) => Promise<unknown>,
  { rollback = false } = {},
): Promise<void> {
  const client = new pg.Client({ connectionString: scratchUrl.toString() });
  await client.connect();
  try {
    const seen: { text: string; params: readonly unknown[] }[] = [];
    const recorder: Queryable = {
      query: async (text, params = []) => {
        seen.push({ text, params });
        const result = await client.query(text, params as unknown[]);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      },
    };
    const timings: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (rollback) await client.query('begin');
      const started = performance.now();
      await work(recorder);
      timings.push(performance.now() - started);
      if (rollback) await client.query('rollback');
    }
    const statement = seen[0] as { text: string; params: readonly unknown[] };
    if (rollback) await client.query('begin');
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers) ${statement.text}`,
      statement.params as unknown[],
    );
    if (rollback) await client.query('rollback');
    timings.sort((a, b) => a - b);
    const median = timings[Math.floor(timings.length / 2)] as number;
    console.log(`== ${title}`);
    console.log(
      `median over ${RUNS} runs, round trip from Node: ${median.toFixed(2)} ms (min ${(timings[0] as number).toFixed(2)} ms)`,
    );
    console.log(plan.rows.map((row) => `   ${row['QUERY PLAN']}`).join('\n'));
    console.log();
  } finally {
    await client.end();
  }
}
