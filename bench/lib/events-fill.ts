import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';

export interface FillOptions {
  /** How many events the table holds afterwards. */
  events: number;
  /** They arrived evenly over this many days, ending now. */
  days?: number;
  /** Events per INSERT statement (each its own transaction). */
  chunk?: number;
  /** Called after each chunk with the number of events stored so far. */
  onProgress?: (stored: number, seconds: number) => void;
}

export interface FillResult {
  events: number;
  workspaceId: string;
  /** The channels the events were spread over, busiest first. */
  channelIds: string[];
  /** From the first INSERT to the end of `vacuum analyze`, and its three phases. */
  seconds: number;
  insertSeconds: number;
  indexSeconds: number;
  vacuumSeconds: number;
  /** The events table alone (heap, TOAST), its indexes, and both. */
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
}

/**
 * Share of the events per channel, in percent (10 channels, the busiest first): a shop's
 * orders channel next to a few quiet ones, rather than an even split.
 */
const CHANNEL_SHARES = [30, 20, 12, 10, 8, 6, 5, 4, 3, 2];
/** The newest events still waiting for the AI; every other one is finished. */
const PENDING_NEWEST = 200;

/**
 * Gives the database at `url` hookprompt's schema (migrations) and a default workspace whose
 * `events` table holds `events` events, as a service that ran for `days` days would have them:
 * received in time order, evenly, over 10 channels of unequal traffic; finished (97.5 % replied,
 * 1 % skipped, 0.5 % failed, 1 % refused) but for the newest few; a 200-byte order as payload,
 * its prompt and a short reply, the request's headers.
 *
 * Fast, as a bulk load is done: the secondary indexes of `events` are dropped first and built
 * again at the end (the same definitions, read from the catalogue), and the session skips
 * triggers and foreign-key checks (`session_replication_role = replica`; the rows are valid by
 * construction). The end state is what the service would have after storing and finishing each
 * event one by one, minus the dead row versions, which `vacuum analyze` would clear anyway.
 */
export async function fillEvents(url: string, options: FillOptions): Promise<FillResult> {
  const { events, days = 30, chunk = 1_000_000 } = options;
  const db = openPostgres({ url, max: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set statement_timeout = 0`);
    // A scratch database being loaded: a crash loses the load, not a promise made to a sender.
    await client.query(`set synchronous_commit = off`);
    const { rows: created } = await client.query<{ workspace_id: string; ids: string[] }>(
      `with ws as (
         insert into workspaces (name, is_default, chat_quota) values ('Default workspace', true, 2000000000)
         returning id
       ), ch as (
         insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
         select ws.id, 'Channel ' || n, 'New order {{order.number}} from {{customer.name}}: {{order.total}} {{order.currency}}. Write a one-line thank-you note.',
                md5('fill token ' || n), md5('fill hash ' || n)
         from ws, generate_series(1, $1::integer) n
         returning id, workspace_id
       )
       select min(workspace_id)::text as workspace_id, array_agg(id::text order by id) as ids from ch`,
      [CHANNEL_SHARES.length],
    );
    const { workspace_id: workspaceId, ids: channelIds } = created[0] as {
      workspace_id: string;
      ids: string[];
    };
    // Channel of event n: slot (n × 7919) mod 100 of a 100-slot table, each channel holding as
    // many slots as its share (7919 is prime to 100, so every run of 100 events covers them all).
    const slots = CHANNEL_SHARES.flatMap((share, i) =>
      Array.from({ length: share }, () => channelIds[i] as string),
    );

    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select indexname as name, indexdef as definition from pg_indexes
       where schemaname = current_schema() and tablename = 'events' and indexname <> 'events_pkey'`,
    );
    for (const index of indexes) await client.query(`drop index ${index.name}`);
    await client.query(`set session_replication_role = replica`);

    const started = performance.now();
    const { rows: end } = await client.query<{ now: Date }>(`select now()`);
    for (let from = 1; from <= events; from += chunk) {
      const to = Math.min(events, from + chunk - 1);
      await client.query(INSERT_EVENTS, [
        workspaceId,
        slots,
        from,
        to,
        events,
        (end[0] as { now: Date }).now,
        days,
        PENDING_NEWEST,
      ]);
      options.onProgress?.(to, (performance.now() - started) / 1000);
    }
    await client.query(`set session_replication_role = default`);
    const inserted = performance.now();
    await buildIndexes(url, indexes);
    const indexed = performance.now();
    await client.query(`vacuum analyze events`);
    const vacuumed = performance.now();

    const { rows: sizes } = await client.query<{ table: string; indexes: string; total: string }>(
      `select pg_table_size('events') as table, pg_indexes_size('events') as indexes,
              pg_total_relation_size('events') as total`,
    );
    const size = sizes[0] as { table: string; indexes: string; total: string };
    return {
      events,
      workspaceId,
      channelIds,
      seconds: (vacuumed - started) / 1000,
      insertSeconds: (inserted - started) / 1000,
      indexSeconds: (indexed - inserted) / 1000,
      vacuumSeconds: (vacuumed - indexed) / 1000,
      tableBytes: Number(size.table),
      indexBytes: Number(size.indexes),
      totalBytes: Number(size.total),
    };
  } finally {
    await client.end();
  }
}

/**
 * Builds the indexes on two connections at once, the slowest (GIN) first: one GIN build uses one
 * core, so two connections keep both of a 2-core machine's cores busy.
 */
async function buildIndexes(
  url: string,
  indexes: { name: string; definition: string }[],
): Promise<void> {
  const queue = [...indexes].sort(
    (a, b) => Number(/using gin/i.test(b.definition)) - Number(/using gin/i.test(a.definition)),
  );
  const builder = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`set statement_timeout = 0`);
      await client.query(`set maintenance_work_mem = '1GB'`);
      for (let index = queue.shift(); index; index = queue.shift())
        await client.query(index.definition);
    } finally {
      await client.end();
    }
  };
  await Promise.all([builder(), builder()]);
}

/**
 * Events $3..$4 of $5, event n received at now − $7 days + (n − 1) × ($7 days ÷ $5): ids rise
 * with time, as they do in a live table. Status by (n × 104729) mod 1000: 5 failed, 10 skipped,
 * 10 refused, the rest replied; the newest $8 are pending.
 */
const INSERT_EVENTS = `
  insert into events (workspace_id, channel_id, received_at, status, payload, prompt, reply, error,
                      attempts, run_at, completed_at, headers, sender_ip, model, usage, latency_ms)
  select $1::bigint, ($2::bigint[])[1 + (n * 7919) % 100], t.at, s.status,
         '{"event":"order.created","order":{"id":' || n || ',"number":"SO-' || lpad(n::text, 8, '0')
           || '","total":' || (n % 997) || '.50,"currency":"EUR","status":"'
           || (array['paid', 'open', 'refunded'])[1 + n % 3] || '","items":' || (1 + n % 4)
           || '},"customer":{"name":"Customer ' || (n % 5000) || '","email":"c' || (n % 50000)
           || '@example.com","city":"' || (array['London', 'Paris', 'Berlin', 'Madrid', 'Rome'])[1 + n % 5]
           || '"}}',
         case when s.status in ('replied', 'failed') then
           'New order SO-' || lpad(n::text, 8, '0') || ' from Customer ' || (n % 5000) || ': '
             || (n % 997) || '.50 EUR. Write a one-line thank-you note.' end,
         case when s.status = 'replied' then
           'Thank you for your order SO-' || lpad(n::text, 8, '0') || ', Customer ' || (n % 5000)
             || '! It ships within two days.' end,
         case s.status when 'failed' then 'the AI provider answered 500 three times'
                       when 'skipped' then 'the template needs order.number, which the payload lacks'
                       when 'rejected' then 'signature_invalid: no signature header' end,
         case s.status when 'replied' then 1 when 'failed' then 3 else 0 end,
         t.at,
         case when s.status in ('pending', 'rejected') then null
              else t.at + (1 + n % 3) * interval '1 second' end,
         '{"content-type":"application/json","user-agent":"Shopify-Captain-Hook","x-forwarded-for":"203.0.113.7"}'::jsonb,
         '203.0.113.' || (n % 250),
         case when s.status = 'replied' then 'gpt-4o-mini' end,
         case when s.status = 'replied' then '{"prompt_tokens":61,"completion_tokens":17,"total_tokens":78}'::jsonb end,
         case when s.status = 'replied' then 800 + n % 1500 end
  from generate_series($3::bigint, $4::bigint) n
  cross join lateral (
    select $6::timestamptz - $7::integer * interval '1 day'
           + (n - 1) * ($7::integer * 86400.0 / $5::bigint) * interval '1 second' as at
  ) t
  cross join lateral (
    select case
      when n > $5::bigint - $8::integer then 'pending'
      when (n * 104729) % 1000 < 5 then 'failed'
      when (n * 104729) % 1000 < 15 then 'skipped'
      when (n * 104729) % 1000 < 25 then 'rejected'
      else 'replied'
    end as status
  ) s`;
