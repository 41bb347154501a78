import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/platform/config.js';
import type { Queryable } from '../../src/db/database.js';
import {
  deleteExpiredEvents,
  RETENTION_START,
  retentionCutoff,
} from '../../src/events/events-repo.js';
import { createEventsRetention, EventsRetention } from '../../src/events/events-retention.js';
import { type ChannelJson } from '../support/driver.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

const FINISHED = ['replied', 'skipped', 'failed', 'rejected'];
const UNFINISHED = ['pending', 'processing'];

const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

afterEach(() => app.ctx.db.query('delete from events'));

/** Stores `count` events of `channel` received `daysAgo` days ago (on the database clock). */
async function seed(status: string, daysAgo: number, count = 1, channelId = channel.id) {
  const { rows } = await app.ctx.db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, received_at, status, payload, completed_at)
     select c.workspace_id, c.id, now() - $3::float8 * interval '1 day', $2, '{"n":' || n || '}',
            case when $2 in ('pending', 'processing') then null else now() end
     from channels c, generate_series(1, $4::integer) n
     where c.id = $1
     returning id`,
    [channelId, status, daysAgo, count],
  );
  return rows.map((row) => row.id);
}

/** The ids Brain Logs shows through the API, sorted. */
async function listedIds(): Promise<string[]> {
  const res = await driver.api('get', '/events?limit=500').expect(200);
  return (res.body.data as { id: string }[]).map((event) => event.id).sort(byId);
}

const byId = (a: string, b: string) => Number(a) - Number(b);

const retention = (options: Partial<ConstructorParameters<typeof EventsRetention>[0]> = {}) =>
  new EventsRetention({
    db: app.ctx.db,
    log: app.ctx.log,
    retentionDays: 30,
    pauseMs: 0,
    ...options,
  });

describe('EVENT_RETENTION_DAYS', () => {
  it('keeps events forever unless set to a whole number of days', () => {
    expect(parseConfig({}).eventRetentionDays).toBe(0);
    expect(parseConfig({ EVENT_RETENTION_DAYS: '30' }).eventRetentionDays).toBe(30);
    expect(() => parseConfig({ EVENT_RETENTION_DAYS: '7.5' })).toThrow(ConfigError);
    expect(() => parseConfig({ EVENT_RETENTION_DAYS: '-1' })).toThrow(
      /^EVENT_RETENTION_DAYS must be a whole number from 0 to 36500 \(got "-1"\)$/,
    );
  });

  it('deletes no event when unset or 0', async () => {
    const forever = createEventsRetention(app.ctx);
    expect(await forever.runOnce()).toMatchObject({ deleted: 0, batches: 0 });
    const ctx = { ...app.ctx, config: parseConfig({ EVENT_RETENTION_DAYS: '30' }) };
    expect(createEventsRetention(ctx)).toBeInstanceOf(EventsRetention);
  });
});

describe('event retention', () => {
  it('deletes finished events older than the retention period, and nothing else', async () => {
    const expired = [];
    for (const status of FINISHED) expired.push(...(await seed(status, 31, 2)));
    const stillOwed = [];
    for (const status of UNFINISHED) stillOwed.push(...(await seed(status, 90)));
    const recent = [];
    for (const status of FINISHED) recent.push(...(await seed(status, 29)));
    const accepted = await driver.sendEvent(channel.webhook_url);
    expect(accepted.status).toBe(200);
    recent.push(accepted.body.event_id as string);

    const run = await retention().runOnce();

    expect(run.deleted).toBe(expired.length);
    expect(await listedIds()).toEqual([...stillOwed, ...recent].sort(byId));
  });

  it('deletes in every workspace, in batches no larger than the batch size', async () => {
    const otherChannel = await app.ctx.db.query<{ id: string }>(
      `with w as (insert into workspaces (name, chat_quota) values ('Other', 10) returning id)
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
       select id, 'Other', '', 'other-token', 'other-token-hash' from w
       returning id`,
    );
    await seed('replied', 40, 250);
    await seed('failed', 40, 120, otherChannel.rows[0]?.id);
    const kept = await seed('replied', 1, 3);

    const deletedPerStatement: number[] = [];
    const recording: Queryable = {
      query: async (text, params) => {
        const result = await app.ctx.db.query(text, params);
        if (/^\s*with expired/.test(text))
          deletedPerStatement.push((result.rows[0] as { deleted: number }).deleted);
        return result as never;
      },
    };
    const run = await retention({ db: recording, batchSize: 100 }).runOnce();

    expect(run).toEqual({ deleted: 370, batches: 5 });
    // default workspace: 100, 100, 50; the other one: 100, 20
    expect(deletedPerStatement).toEqual([100, 100, 50, 100, 20]);
    expect(await listedIds()).toEqual(kept);
    const { rows } = await app.ctx.db.query(`select id from events where channel_id = $1`, [
      otherChannel.rows[0]?.id,
    ]);
    expect(rows).toEqual([]);
    await app.ctx.db.query(`delete from workspaces where name = 'Other'`);
  });

  it('stops after the current batch when stopped during a run', async () => {
    await seed('replied', 40, 30);
    const stoppable: EventsRetention = retention({
      batchSize: 10,
      db: {
        query: async (text, params) => {
          const result = await app.ctx.db.query(text, params);
          if (/^\s*with expired/.test(text)) void stoppable.stop();
          return result as never;
        },
      },
    });
    expect(await stoppable.runOnce()).toMatchObject({ deleted: 10, batches: 1 });
  });
});

describe.skipIf(!testDatabaseUrl)(
  'event retention beside live traffic (real PostgreSQL only: the embedded database runs one statement at a time)',
  () => {
    /** A connection of its own to the app's database, as another process would have. */
    const useConnection = () =>
      useFixture(
        async () => {
          const client = new pg.Client({ connectionString: app.database.url });
          await client.connect();
          return client;
        },
        { stop: (client) => client.end() },
      );
    const deleter = useConnection();
    const other = useConnection();

    const onClient = (client: pg.Client): Queryable => ({
      query: async (text, params) => {
        const result = await client.query(text, params as unknown[]);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      },
    });

    it('accepts webhooks while a large delete is in progress, and locks no workspace or channel', async () => {
      await seed('replied', 60, 20_000);
      const cutoff = await retentionCutoff(app.ctx.db, 30);
      const deleterPid = (await deleter.query('select pg_backend_pid() as pid')).rows[0].pid;

      // The delete runs and holds its locks in a transaction left open until the end of the test.
      await deleter.query('begin');
      const { deleted } = await deleteExpiredEvents(
        onClient(deleter),
        app.ctx.defaultWorkspaceId,
        cutoff,
        RETENTION_START,
        20_000,
      );
      expect(deleted).toBe(20_000);

      // No row lock on the workspace (which ingest locks for the quota) or the channel (nowait:
      // a lock would fail the test at once rather than hang it)...
      await other.query('begin');
      const workspace = await other.query(
        'select id from workspaces where id = $1 for update nowait',
        [app.ctx.defaultWorkspaceId],
      );
      const channelRow = await other.query(
        'select id from channels where id = $1 for update nowait',
        [channel.id],
      );
      await other.query('rollback');
      expect([workspace.rowCount, channelRow.rowCount]).toEqual([1, 1]);
      // ...and, at table level, only the events table and its indexes are locked (and the
      // reply deliveries that point to the deleted events, which go with them).
      const { rows } = await other.query<{ relation: string }>(
        `select relation::regclass::text as relation from pg_locks
         where pid = $1 and locktype = 'relation' order by 1`,
        [deleterPid],
      );
      expect(rows.map((row) => row.relation)).toContain('events');
      expect(
        rows.map((row) => row.relation).filter((name) => !/^(events|deliver)/.test(name)),
      ).toEqual([]);

      const accepted = await driver.sendEvent(channel.webhook_url, { order: { id: 7 } });
      expect(accepted.status).toBe(200);

      await deleter.query('commit');
      expect(await listedIds()).toEqual([accepted.body.event_id]);
    });

    it('passes over events another process is deleting, instead of waiting for them', async () => {
      const held = await seed('replied', 40, 5);
      await seed('replied', 40, 20);
      await deleter.query('begin');
      await deleter.query('select id from events where id = any($1::bigint[]) for update', [held]);

      const run = await retention({ batchSize: 10 }).runOnce();
      expect(run.deleted).toBe(20);

      await deleter.query('commit');
      expect(await retention().runOnce()).toEqual({ deleted: 5, batches: 1 });
      expect(await listedIds()).toEqual([]);
    });
  },
);
