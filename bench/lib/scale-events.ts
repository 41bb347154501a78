import { performance } from 'node:perf_hooks';
import { readMigrations } from '../../src/db/migrate.js';
import type { BenchRun } from './bench-run.js';
import { fillEvents, type FillResult } from './events-fill.js';
import { summariseLatencies, type LatencySummary } from './latency.js';
import type { ClosedLoopRow } from './closed-loop.js';
import { runSql, type ScratchDatabase } from './scratch-database.js';
import type { RunningTarget, Target } from './targets.js';

export interface ScaleEventsOptions {
  /** Events the full database holds before the ingest runs. */
  events: number;
  /** Closed-loop runs at 128 connections on each database, alternating empty, full, empty… */
  rounds: number;
  /**
   * Keep the filled database (named after `events`) at the end, and reuse one kept earlier
   * when it was filled with the same migrations.
   */
  keep: boolean;
  /** hookprompt on `databaseUrl`, as the rest of the benchmark runs it. */
  target: (key: string, label: string) => Target;
}

export interface BrainLogsPage {
  page: string;
  /** Answer time of GET /api/v1/events (first page, 50 events), 30 requests after 5 unmeasured. */
  empty: LatencySummary;
  full: LatencySummary;
}

export interface ScaleEventsResult {
  events: number;
  database: string;
  fill: FillResult & {
    filledAt: string;
    /** True when a database kept by an earlier run was used: `seconds` are that run's. */
    reused: boolean;
    /** Time spent now to remove what an earlier run's ingest left in the kept database. */
    cleanupSeconds?: number;
  };
  brainLogs: BrainLogsPage[];
  /** Ingest at 128 connections on an empty database and on the full one, in the order run. */
  empty: ClosedLoopRow[];
  full: ClosedLoopRow[];
  /** Mean accepted/s on the full database ÷ mean on the empty one. */
  ratio: number;
}

const CONNECTIONS = 128;

/**
 * Does ingest slow down when the events table is large? Fills a database with `events` events
 * (bench/lib/events-fill.ts; ~11 minutes for 10,000,000 on 2 cores) and another with none, the
 * same schema, workspace and channels; starts hookprompt on each; times the Brain Logs first
 * pages through the API on both; then measures accepted/s at 128 connections on each, alternating.
 */
export async function runScaleEvents(
  run: BenchRun,
  options: ScaleEventsOptions,
): Promise<ScaleEventsResult> {
  const { db: full, fill } = await filledDatabase(run, options);
  const empty = await run.scratch('events0');
  await fillEvents(empty.url, { events: 0 });

  const emptyTarget = options.target('ours-0', 'ours, 0 events');
  const fullTarget = options.target(
    'ours-full',
    `ours, ${options.events.toLocaleString('en')} events`,
  );
  const onEmpty = await run.start(emptyTarget, empty);
  const onFull = await run.start(fullTarget, full);
  try {
    // The busiest channel of the fill; on the empty database, the one channel with events (the
    // warm-up's).
    const [{ id: warmedUp } = { id: '0' }] = await runSql<{ id: string }>(
      empty.url,
      `select max(channel_id)::text as id from events`,
    );
    const brainLogs: BrainLogsPage[] = [
      {
        page: `one channel's newest 50`,
        empty: await timeApi(onEmpty, `?channel_id=${warmedUp}&limit=50`),
        full: await timeApi(onFull, `?channel_id=${fill.channelIds[0] ?? ''}&limit=50`),
      },
      {
        page: `the workspace's newest 50`,
        empty: await timeApi(onEmpty, '?limit=50'),
        full: await timeApi(onFull, '?limit=50'),
      },
    ];
    console.log(
      brainLogs
        .map(
          (b) =>
            `Brain Logs, ${b.page}: median ${b.full.p50.toFixed(1)} ms at ${options.events.toLocaleString('en')} events, ` +
            `${b.empty.p50.toFixed(1)} ms at 0`,
        )
        .join('\n'),
    );

    const emptyRows: ClosedLoopRow[] = [];
    const fullRows: ClosedLoopRow[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      for (const [target, running, db, rows] of [
        [emptyTarget, onEmpty, empty, emptyRows],
        [fullTarget, onFull, full, fullRows],
      ] as const) {
        const row = { ...(await run.closedLoop(target, running, db, CONNECTIONS)), round };
        console.log(
          `${row.target.padEnd(24)} c=${CONNECTIONS} ${Math.round(row.acceptedPerSecond)}/s`,
        );
        rows.push(row);
      }
    }
    const mean = (rows: ClosedLoopRow[]) =>
      rows.reduce((sum, r) => sum + r.acceptedPerSecond, 0) / rows.length;
    return {
      events: options.events,
      database: options.keep ? full.name : `${full.name} (dropped)`,
      fill,
      brainLogs,
      empty: emptyRows,
      full: fullRows,
      ratio: mean(fullRows) / mean(emptyRows),
    };
  } finally {
    await onFull.stop();
    await onEmpty.stop();
  }
}

/** What a kept database's comment records, to reuse it only when it matches. */
interface FillRecord extends FillResult {
  filledAt: string;
  migrations: string;
  /** The last event of the fill: later ones were added by ingest runs. */
  lastId: string;
}

async function filledDatabase(
  run: BenchRun,
  options: ScaleEventsOptions,
): Promise<{ db: Pick<ScratchDatabase, 'url' | 'name'>; fill: ScaleEventsResult['fill'] }> {
  const adminUrl = run.options.adminUrl;
  const migrations = (await readMigrations()).map((m) => m.version).join(',');
  if (!options.keep) {
    const db = await run.scratch('events');
    const fill = await fillLogged(db.url, options.events);
    return { db, fill: { ...fill, filledAt: new Date().toISOString(), reused: false } };
  }

  const name = `hookprompt_bench_events_${options.events}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = { name, url: url.toString() };
  const [kept] = await runSql<{ comment: string | null }>(
    adminUrl,
    `select shobj_description(oid, 'pg_database') as comment from pg_database where datname = $1`,
    [name],
  );
  const record = kept?.comment ? (JSON.parse(kept.comment) as FillRecord) : undefined;
  if (record && record.events === options.events && record.migrations === migrations) {
    console.log(`reusing ${name}, filled ${record.filledAt} in ${record.seconds.toFixed(0)} s`);
    const started = performance.now();
    // What earlier ingest runs added: their channels (and, by cascade, their events).
    const [{ n } = { n: 0 }] = await runSql<{ n: number }>(
      db.url,
      `with gone as (delete from channels where not (id::text = any($1)) returning 1)
       select count(*)::int as n from gone`,
      [record.channelIds],
    );
    await runSql(db.url, `delete from events where id > $1`, [record.lastId]);
    if (n > 0) await runSql(db.url, `vacuum analyze events`);
    const { migrations: _, lastId: __, ...fill } = record;
    return {
      db,
      fill: { ...fill, reused: true, cleanupSeconds: (performance.now() - started) / 1000 },
    };
  }

  await runSql(adminUrl, `drop database if exists ${name} with (force)`);
  await runSql(adminUrl, `create database ${name}`);
  const fill = await fillLogged(db.url, options.events);
  const [{ last } = { last: '0' }] = await runSql<{ last: string }>(
    db.url,
    `select coalesce(max(id), 0)::text as last from events`,
  );
  const filledAt = new Date().toISOString();
  const comment: FillRecord = { ...fill, filledAt, migrations, lastId: last };
  await runSql(
    adminUrl,
    `comment on database ${name} is '${JSON.stringify(comment).replaceAll("'", "''")}'`,
  );
  return { db, fill: { ...fill, filledAt, reused: false } };
}

async function fillLogged(url: string, events: number): Promise<FillResult> {
  console.log(`filling a database with ${events.toLocaleString('en')} events...`);
  const fill = await fillEvents(url, {
    events,
    onProgress: (stored, seconds) =>
      console.log(`  ${stored.toLocaleString('en')} stored, ${seconds.toFixed(0)} s`),
  });
  console.log(
    `  filled in ${fill.seconds.toFixed(0)} s (insert ${fill.insertSeconds.toFixed(0)} s, indexes ` +
      `${fill.indexSeconds.toFixed(0)} s, vacuum analyze ${fill.vacuumSeconds.toFixed(0)} s): ` +
      `table ${gb(fill.tableBytes)} + indexes ${gb(fill.indexBytes)}`,
  );
  return fill;
}

export const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/** Times GET /api/v1/events`query` on the running server: 5 unmeasured, then 30. */
async function timeApi(running: RunningTarget, query: string): Promise<LatencySummary> {
  const url = `${running.server.origin}/api/v1/events${query}`;
  const headers = { authorization: `Bearer ${running.apiKey ?? ''}` };
  const samples: number[] = [];
  for (let i = 0; i < 35; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers });
    const body = (await res.json()) as { data?: unknown[] };
    if (!res.ok || body.data?.length !== 50)
      throw new Error(`GET ${url}: ${res.status}, ${body.data?.length ?? 0} events`);
    if (i >= 5) samples.push(performance.now() - started);
  }
  return summariseLatencies(samples);
}
