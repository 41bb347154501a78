/**
 * Retention two ways, on the same 1,000,000 events over 30 days: the service's batched DELETE
 * (EventsRetention, 1000 events per statement, no pause) of the oldest 10 days from the events
 * table, against DROP TABLE of the 10 oldest daily partitions of a copy of it partitioned by
 * received_at. Both are timed, and the second shows what time partitioning would buy; the
 * numbers are in bench/HISTORY.md ("Time partitioning").
 *
 *   npx tsx bench/retention-partitions.ts      (BENCH_DATABASE_URL names the server)
 */
import { performance } from 'node:perf_hooks';
import type { Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { EventsRetention } from '../src/events/events-retention.js';
import { createLogger } from '../src/platform/logger.js';
import { createScratchDatabase } from './lib/scratch-database.js';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = 1_000_000;
const DAYS = 30;
const KEEP_DAYS = 20;
const CHUNK = 50_000;

async function seed(db: Database): Promise<void> {
  const { rows } = await db.query<{ workspace_id: string; id: string }>(
    `with w as (insert into workspaces (name, chat_quota) values ('bench', 2000000000) returning id)
     insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
     select id, 'bench', 'Order {{order.id}}', 'bench-token', 'bench-hash' from w
     returning workspace_id, id`,
  );
  const { workspace_id: workspaceId, id: channelId } = rows[0]!;
  for (let from = 1; from <= EVENTS; from += CHUNK) {
    await db.query(
      `insert into events (workspace_id, channel_id, received_at, status, payload, prompt, reply,
                           attempts, completed_at)
       select $1, $2, now() - interval '${DAYS} days' + n * (${DAYS} * 86400.0 / $3) * interval '1 second',
              'replied', '{"order":{"id":' || n || ',"status":"paid","total":149.9}}',
              'Order ' || n, 'Thanks for order ' || n, 1, now()
       from generate_series($4::integer, $5::integer) n`,
      [workspaceId, channelId, EVENTS, from, Math.min(EVENTS, from + CHUNK - 1)],
    );
  }
  await db.exec('vacuum analyze events');
}

/** A copy of the events, partitioned by day of received_at (indexes as the listing needs). */
async function partitionedCopy(db: Database): Promise<void> {
  await db.exec(`
    create table events_by_day (like events including defaults) partition by range (received_at);
    do $$
    declare day date;
    begin
      for day in select generate_series(current_date - ${DAYS + 1}, current_date, interval '1 day')::date loop
        execute format('create table events_by_day_%s partition of events_by_day
                        for values from (%L) to (%L)', to_char(day, 'YYYYMMDD'), day, day + 1);
      end loop;
    end $$;
    create index on events_by_day (workspace_id, received_at desc, id desc);
    create index on events_by_day (channel_id, received_at desc, id desc);
    insert into events_by_day select * from events;
  `);
  await db.exec('vacuum analyze events_by_day');
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase(adminUrl, 'partitions');
  const db = openPostgres({ url: scratch.url, max: 2 });
  try {
    await migrate(db);
    const [, seedMs] = await timed(() => seed(db));
    await partitionedCopy(db);
    console.log(
      `# retention of 10 of 30 days, ${EVENTS.toLocaleString('en')} events (loaded in ${(seedMs / 1000).toFixed(0)} s)`,
    );

    const retention = new EventsRetention({
      db,
      log: createLogger('silent'),
      retentionDays: KEEP_DAYS,
      pauseMs: 0,
    });
    const [deleted, deleteMs] = await timed(() => retention.runOnce());
    console.log(
      `batched DELETE (1000 per statement, no pause): ${JSON.stringify(deleted)} in ${deleteMs.toFixed(0)} ms`,
    );

    const { rows } = await db.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'events_by_day'::regclass
         and c.relname < 'events_by_day_' || to_char(current_date - ${KEEP_DAYS}, 'YYYYMMDD')
       order by c.relname`,
    );
    const [, dropMs] = await timed(async () => {
      for (const { name } of rows) await db.exec(`drop table ${name}`);
    });
    console.log(`DROP TABLE of ${rows.length} daily partitions: ${dropMs.toFixed(0)} ms`);
  } finally {
    await db.close();
    await scratch.drop();
  }
}

await main();
