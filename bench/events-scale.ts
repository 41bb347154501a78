/**
 * What Brain Logs, the queue and retention cost as the events table grows, on a real PostgreSQL.
 *
 * Events arrive at a steady rate (one every 2.6 s: 1,000,000 over 30 days, ending now, round-robin
 * over 10 channels, every 1000th still pending). The table is filled in time order to 10,000,
 * 100,000 and 1,000,000 events; at each size the statements the service really sends (captured
 * from Brain Logs' pages and chart, and claimEvents) are timed (median of RUNS round trips from
 * Node) and EXPLAINed (shared buffers touched: work that does not depend on the machine):
 *   1. one channel, the newest hour, first page;
 *   2. one channel, a page halfway through its history (500, 5,000, 50,000 newer events);
 *   3. the whole workspace, first page, no filter;
 *   4. the queue claim of a batch of 8 (rolled back, so every run claims the same events).
 * Then, at 1,000,000 events, Brain Logs search, chart and export (brainLogs below) and retention (EventsRetention.runOnce, no pause between batches)
 * deletes the oldest ten days, and its rate and per-batch times are reported.
 *
 * Run with `npm run bench:events` (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, names the server; the scratch database
 * hookprompt_bench_scale is dropped at the end unless --keep is given). --plans prints each plan.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Database, Queryable } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { encodeCursor } from '../src/brain-logs/events-cursor.js';
import {
  EventsRetention,
  RETENTION_BATCH_SIZE,
  RETENTION_PAUSE_MS,
} from '../src/events/events-retention.js';
import { EventCounts } from '../src/brain-logs/event-counts.js';
import { EventPages } from '../src/brain-logs/event-pages.js';
import { createLogger } from '../src/platform/logger.js';
import { claimEvents } from '../src/worker/queue-claim.js';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCRATCH = 'hookprompt_bench_scale';
const SIZES = [10_000, 100_000, 1_000_000];
const SPAN_DAYS = 30;
const CHANNELS = 10;
const RUNS = 25;
const LOAD_CHUNK = 50_000;
const RETENTION_DAYS = 20;
const keep = process.argv.includes('--keep');
/** One event in RARE_EVERY carries RARE_WORD in its payload: about 2 in a week's 233,000. */
const RARE_EVERY = 100_000;
const RARE_WORD = 'Zephyrine';
const EXPORT_ROWS = 100_000;
const showPlans = process.argv.includes('--plans');

interface Measure {
  medianMs: number;
  buffers: number;
}

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
  const { workspaceId, firstChannelId, end } = await createChannels(db);
  const channelId = firstChannelId;
  const rows: string[][] = [];
  let loaded = 0;
  for (const size of SIZES) {
    const started = performance.now();
    await load(db, { workspaceId, firstChannelId, end, from: loaded + 1, to: size });
    loaded = size;
    const tableSize = await db.query<{ size: string }>(
      `select pg_size_pretty(pg_total_relation_size('events')) as size`,
    );
    console.log(
      `${size.toLocaleString('en')} events (loaded in ${((performance.now() - started) / 1000).toFixed(1)} s; events table with indexes: ${tableSize.rows[0]?.size})`,
    );

    const newest = await db.query<{ at: Date }>(
      'select max(received_at) as at from events where channel_id = $1',
      [channelId],
    );
    const to = new Date((newest.rows[0] as { at: Date }).at.getTime() + 1);
    const hour = { channelId, from: new Date(to.getTime() - 3_600_000), to };
    const firstPage = await measure('1. channel, newest hour, first page', (q) =>
      new EventPages(q).list(workspaceId, hour),
    );

    const depth = Math.floor(size / CHANNELS / 2);
    const deep = await db.query<{ at: string; id: string }>(
      `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id
       from events where channel_id = $1 order by received_at desc, id desc offset $2 limit 1`,
      [channelId, depth],
    );
    const cursor = encodeCursor({
      receivedAt: deep.rows[0]?.at as string,
      id: deep.rows[0]?.id as string,
    });
    const deepPage = await measure(`2. channel, page after ${depth} newer events`, (q) =>
      new EventPages(q).list(workspaceId, { channelId, cursor }),
    );

    const workspacePage = await measure('3. workspace, first page', (q) =>
      new EventPages(q).list(workspaceId, {}),
    );

    const claim = await measure(
      '4. queue claim, batch of 8 (rolled back)',
      (q) => claimEvents(q, 'bench', 8, 60_000),
      { rollback: true },
    );

    rows.push([
      size.toLocaleString('en'),
      cell(firstPage),
      cell(deepPage),
      cell(workspacePage),
      cell(claim),
    ]);
  }

  console.log(
    `\nmedian of ${RUNS} round trips from Node, in ms (shared buffers the plan touched)\n`,
  );
  printTable(
    ['events', '1. hour, first page', '2. deep page', '3. workspace page', '4. claim 8'],
    rows,
  );

  await brainLogs(db, workspaceId, channelId, end);
  await retention(db);
} finally {
  await db.close();
  if (!keep) await admin(`drop database if exists ${SCRATCH} with (force)`);
}

async function createChannels(target: Database) {
  const workspace = await target.query<{ id: string; end: Date }>(
    `insert into workspaces (name, chat_quota, is_default) values ('Bench', 2000000000, true)
     returning id, now() as end`,
  );
  const { id: workspaceId, end } = workspace.rows[0] as { id: string; end: Date };
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
  return { workspaceId, firstChannelId: channels.rows[0]?.first as string, end };
}

/**
 * Events `from`..`to` of the final 1,000,000, in time order: event n is received at
 * end − 30 days + n × 2.592 s, so each stage adds later history, as a live service would.
 */
async function load(
  target: Database,
  at: { workspaceId: string; firstChannelId: string; end: Date; from: number; to: number },
): Promise<void> {
  const last = SIZES[SIZES.length - 1] as number;
  // In statements of 50,000 events: 900,000 at once take longer than the statement timeout.
  for (let from = at.from; from <= at.to; from += LOAD_CHUNK) {
    await loadRows(target, { ...at, from, to: Math.min(at.to, from + LOAD_CHUNK - 1) }, last);
  }
  await target.exec('vacuum analyze events');
}

async function loadRows(
  target: Queryable,
  at: { workspaceId: string; firstChannelId: string; end: Date; from: number; to: number },
  last: number,
): Promise<void> {
  await target.query(
    `insert into events (workspace_id, channel_id, received_at, status, payload, prompt, reply, attempts, run_at, completed_at)
     select $1, $4::bigint + n % $2, t.at, s.status,
            '{"order":{"id":' || n || ',"total":' || (n % 997) || '.50,"currency":"EUR","status":"'
              || (array['paid', 'open', 'refunded'])[1 + n % 3] || '"},"customer":{"name":"Customer '
              || (n % 5000) || '","email":"c' || n || '@example.com"}'
              || case when n % ${RARE_EVERY} = 0 then ',"note":"${RARE_WORD} delivery"' else '' end || '}',
            case when s.status = 'replied' then 'Order ' || n || ' for Customer ' || (n % 5000) end,
            case when s.status = 'replied' then 'Thanks! Order ' || n || ' is confirmed and will ship within two days.' end,
            case when s.status = 'replied' then 1 else 0 end,
            t.at,
            case when s.status = 'replied' then t.at end
     from generate_series($6::integer, $7::integer) n
     cross join lateral (select $5::timestamptz - interval '${SPAN_DAYS} days'
                                + n * (${SPAN_DAYS} * 86400.0 / $3) * interval '1 second' as at) t
     cross join lateral (select case when n % 1000 = 0 then 'pending' else 'replied' end as status) s`,
    [at.workspaceId, CHANNELS, last, at.firstChannelId, at.end, at.from, at.to],
  );
}

/** Times `work`'s first statement over RUNS runs and EXPLAINs it once (analyze, buffers). */
async function measure(
  title: string,
  work: (q: Queryable) => Promise<unknown>,
  { rollback = false, plans = showPlans } = {},
): Promise<Measure> {
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
    const plan = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `explain (analyze, buffers, format json) ${statement.text}`,
      statement.params as unknown[],
    );
    if (rollback) await client.query('rollback');
    const root = (plan.rows[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan;
    timings.sort((a, b) => a - b);
    const result = {
      medianMs: timings[Math.floor(timings.length / 2)] as number,
      buffers: root['Shared Hit Blocks'] + root['Shared Read Blocks'],
    };
    if (plans) {
      console.log(`   ${title}: ${result.medianMs.toFixed(2)} ms`);
      console.log(describePlan(root, '     '));
    }
    return result;
  } finally {
    await client.end();
  }
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function describePlan(node: PlanNode, indent: string): string {
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  const line = `${indent}${node['Node Type']}${index} (rows ${node['Actual Rows']}, buffers ${node['Shared Hit Blocks'] + node['Shared Read Blocks']})`;
  return [line, ...(node.Plans ?? []).map((child) => describePlan(child, `${indent}  `))].join(
    '\n',
  );
}

/**
 * Brain Logs for operators at 1,000,000 events: the first page of a rare word across the
 * workspace over 7 days, of payload.order.status=paid on one channel over 24 hours, the chart's
 * aggregation over 7 days (each with its plan), and an export of 100,000 events in a process of
 * its own (rows/s and that process's peak RSS).
 */
async function brainLogs(target: Database, workspaceId: string, channelId: string, end: Date) {
  const to = new Date(end.getTime() + 1);
  const week = new Date(to.getTime() - 7 * 86_400_000);
  const day = new Date(to.getTime() - 86_400_000);
  console.log('\nBrain Logs search at 1,000,000 events (goal: each first page ≤ 100 ms)');
  const results: [string, Measure][] = [];
  const show = async (title: string, work: (q: Queryable) => Promise<unknown>) => {
    const measured = await measure(title, work, { plans: true });
    results.push([title, measured]);
  };
  await show(`5. q=${RARE_WORD.toLowerCase()}, workspace, 7 days, first page`, (q) =>
    new EventPages(q).list(workspaceId, { q: RARE_WORD.toLowerCase(), from: week, to }),
  );
  await show('6. payload.order.status=paid, one channel, 24 h, first page', (q) =>
    new EventPages(q).list(workspaceId, {
      channelId,
      from: day,
      to,
      payload: [{ path: 'order.status', value: 'paid' }],
    }),
  );
  await show('7. chart: events per day and status, workspace, 7 days', (q) =>
    new EventCounts(q).volume(workspaceId, {}, week, to),
  );
  printTable(
    ['statement', 'median ms', 'buffers'],
    results.map(([title, m]) => [title, m.medianMs.toFixed(2), String(m.buffers)]),
  );
  const exported = await exportInChild(workspaceId, channelId);
  console.log(
    `\nexport of ${exported.rows.toLocaleString('en')} events (CSV, one channel): ${exported.seconds.toFixed(2)} s, ` +
      `${Math.round(exported.rows / exported.seconds).toLocaleString('en')} rows/s, ` +
      `${(exported.bytes / 1e6).toFixed(1)} MB written, peak RSS of the exporting process ${(exported.maxRssKb / 1024).toFixed(0)} MB, ` +
      `${((exported.maxRssKb - exported.rssBeforeKb) / 1024).toFixed(0)} MB over its ${(exported.rssBeforeKb / 1024).toFixed(0)} MB before the export ` +
      `(goal: ≥ 20,000 rows/s, ≤ 100 MB)`,
  );
}

/** Runs bench/lib/export-run.ts on the scratch database and reads its one line of JSON. */
async function exportInChild(workspaceId: string, channelId: string) {
  const { execFile } = await import('node:child_process');
  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/lib/export-run.ts'],
      {
        env: {
          ...process.env,
          EXPORT_DATABASE_URL: scratchUrl.toString(),
          EXPORT_WORKSPACE: workspaceId,
          EXPORT_CHANNEL: channelId,
        },
      },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  const result = JSON.parse(output.trim().split('\n').pop() as string) as {
    rows: number;
    bytes: number;
    seconds: number;
    rssBeforeKb: number;
    maxRssKb: number;
  };
  if (result.rows !== EXPORT_ROWS) throw new Error(`exported ${result.rows}, not ${EXPORT_ROWS}`);
  return result;
}

/** Deletes the oldest ten days with the service's own retention, timing every batch. */
async function retention(target: Database): Promise<void> {
  const batchMs: number[] = [];
  const timed: Queryable = {
    query: async (text, params) => {
      const started = performance.now();
      const result = await target.query(text, params);
      if (/^\s*with expired/.test(text)) batchMs.push(performance.now() - started);
      return result as never;
    },
  };
  const before = await target.query<{ count: number }>(
    'select count(*)::integer as count from events',
  );
  const run = new EventsRetention({
    db: timed,
    log: createLogger('silent'),
    retentionDays: RETENTION_DAYS,
    pauseMs: 0,
  });
  const started = performance.now();
  const { deleted, batches } = await run.runOnce();
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...batchMs].sort((a, b) => a - b);
  const at = (q: number) =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
  console.log(
    `\nretention (EVENT_RETENTION_DAYS=${RETENTION_DAYS}, batches of ${RETENTION_BATCH_SIZE}, no pause) on ${before.rows[0]?.count.toLocaleString('en')} events:`,
  );
  console.log(
    `  deleted ${deleted.toLocaleString('en')} events in ${batches} batches, ${seconds.toFixed(1)} s: ${Math.round(deleted / seconds).toLocaleString('en')} events/s`,
  );
  const paced = RETENTION_BATCH_SIZE / ((Number(at(0.5)) + RETENTION_PAUSE_MS) / 1000);
  console.log(
    `  with the service's ${RETENTION_PAUSE_MS} ms pause between batches: about ${Math.round(paced).toLocaleString('en')} events/s`,
  );
  console.log(
    `  one batch: median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms (first ${batchMs[0]?.toFixed(1)} ms, last full ${batchMs[batchMs.length - 2]?.toFixed(1)} ms)`,
  );
}

function cell(m: Measure): string {
  return `${m.medianMs.toFixed(2)} (${m.buffers})`;
}

function printTable(header: string[], body: string[][]): void {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of body) console.log(line(row));
}
