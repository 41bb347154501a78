import { beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import { EventPages } from '../../src/brain-logs/event-pages.js';
import { EventThreads } from '../../src/brain-logs/events-thread.js';
import { claimEvents } from '../../src/worker/queue-claim.js';
import { useTestApp } from '../support/harness.js';
import type { TestApp } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/** Runs `work` against `app`'s database, recording the SQL it is given, and returns the first statement. */
async function firstQueryOf(app: TestApp, work: (db: Queryable) => Promise<unknown>) {
  const seen: { text: string; params: readonly unknown[] }[] = [];
  await work({
    query: (text, params = []) => {
      seen.push({ text, params });
      return app.ctx.db.query(text, params);
    },
  });
  return seen[0] as { text: string; params: readonly unknown[] };
}

/** Every node of the plan PostgreSQL makes for the statement. */
async function planNodes(app: TestApp, text: string, params: readonly unknown[]) {
  const { rows } = await app.ctx.db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `explain (format json) ${text}`,
    params,
  );
  return nodesOf((rows[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan);
}

describe.skipIf(!testDatabaseUrl)(
  'query plans (real PostgreSQL only: loading the 200,000 events a realistic plan needs takes about 15 s in embedded PGlite)',
  () => {
    const { app, driver } = useTestApp();
    let channelId: string;
    const capture = (work: (db: Queryable) => Promise<unknown>) => firstQueryOf(app, work);
    const planOf = (text: string, params: readonly unknown[]) => planNodes(app, text, params);

    beforeAll(async () => {
      const channels = [];
      for (let i = 0; i < 10; i++)
        channels.push(await driver.createChannel({ name: `Channel ${i}` }));
      channelId = channels[3]?.id as string;
      // 200,000 events: 3 days of one every 13 seconds per channel, nearly all finished; one
      // statement per channel, each well within the service's statement limit.
      for (const channel of channels) {
        await app.ctx.db.query(
          `insert into events (workspace_id, channel_id, received_at, status, payload, completed_at)
           select $1, $2, timestamptz '2021-01-01' + n * interval '13 seconds',
                  case when n % 1000 = 0 then 'pending' else 'replied' end, '{"n":1}', now()
           from generate_series(1, 20000) n`,
          [app.ctx.defaultWorkspaceId, channel.id],
        );
      }
      await app.ctx.db.query('analyze events');
    });

    it('reads one channel in a time window from events_channel_received_idx', async () => {
      const { text, params } = await capture((db) =>
        new EventPages(db).list(app.ctx.defaultWorkspaceId, {
          channelId,
          from: new Date('2021-01-02T10:00:00Z'),
          to: new Date('2021-01-02T11:00:00Z'),
        }),
      );
      const nodes = await planOf(text, params);
      expect(
        nodes.filter((n) => n['Relation Name'] === 'events').map((n) => n['Index Name']),
      ).toEqual(['events_channel_received_idx']);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    });

    it('reads a page deep in the range from the index too, starting at the cursor', async () => {
      const service = new EventPages(app.ctx.db);
      const first = await service.list(app.ctx.defaultWorkspaceId, { channelId, limit: 500 });
      const { text, params } = await capture((db) =>
        new EventPages(db).list(app.ctx.defaultWorkspaceId, {
          channelId,
          cursor: first.next_cursor as string,
        }),
      );
      const nodes = await planOf(text, params);
      // Either Brain Logs index serves it, depending on how many channels share the workspace;
      // what matters is that the page is read in index order from the cursor on, without a sort.
      const scans = nodes.filter((n) => n['Relation Name'] === 'events');
      expect(scans).toHaveLength(1);
      expect(['events_channel_received_idx', 'events_workspace_received_idx']).toContain(
        scans[0]?.['Index Name'],
      );
      // The cursor bounds the index scan itself, so a deep page reads no more rows than the first.
      expect(scans[0]?.['Index Cond']).toContain('ROW(received_at, id) <');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
    });

    it("reads an event page's thread from events_thread_idx, from the event outwards", async () => {
      // 20,000 events of one channel in 200 threads of 100.
      const { rows } = await app.ctx.db.query<{ id: string }>(
        `insert into events (workspace_id, channel_id, received_at, status, payload, thread_key)
         select $1, $2, timestamptz '2021-02-01' + n * interval '13 seconds', 'replied', '{}',
                't' || (n % 200)
         from generate_series(1, 20000) n
         returning id`,
        [app.ctx.defaultWorkspaceId, channelId],
      );
      await app.ctx.db.query('analyze events');
      const middle = rows[10_000]?.id as string;
      const { text, params } = await capture((db) =>
        new EventThreads(db).around(app.ctx.defaultWorkspaceId, {
          id: middle,
          channel_id: channelId,
          thread_key: 't1',
        }),
      );
      const nodes = await planOf(text, params);
      const scans = nodes.filter((n) => n['Relation Name'] === 'events');
      expect(scans.map((n) => n['Index Name'])).toEqual(['events_thread_idx', 'events_thread_idx']);
      for (const scan of scans) expect(scan['Index Cond']).toMatch(/thread_key = .*id [<>]=? /s);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    });

    // Migration 0012: the search indexes hold finished events only, so that the queue's updates
    // do not index every payload again; unfinished events are read through the queue index.
    it('finds a rare word through the trigram index and the unfinished events through the queue index', async () => {
      const { text, params } = await capture((db) =>
        new EventPages(db).list(app.ctx.defaultWorkspaceId, { q: 'zebrafish' }),
      );
      const nodes = await planOf(text, params);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      const indexes = nodes.flatMap((n) => n['Index Name'] ?? []);
      expect(indexes).toContain('events_search_text_idx');
      expect(indexes).toContain('events_queue_channel_idx');
    });

    it('claims from the partial queue index, not the whole table', async () => {
      const { text, params } = await capture((db) => claimEvents(db, 'planner', 8, 60_000));
      const nodes = await planOf(text, params);
      expect(nodes.map((n) => n['Index Name'])).toContain('events_queue_channel_idx');
      expect(
        nodes.filter((n) => n['Relation Name'] === 'events').map((n) => n['Node Type']),
      ).not.toContain('Seq Scan');
    });
  },
);

describe('the claim on a small events table', () => {
  const { app, driver } = useTestApp();

  beforeAll(async () => {
    const channel = await driver.createChannel({ name: 'Orders' });
    // A few thousand unfinished events, as a fresh installation's first busy hour leaves them.
    await app.ctx.db.query(
      `insert into events (workspace_id, channel_id, status, payload)
       select $1, $2, 'pending', '{"n":1}' from generate_series(1, 3000)`,
      [app.ctx.defaultWorkspaceId, channel.id],
    );
    await app.ctx.db.query('analyze events');
  });

  it('locks the events it deals out through their primary key, not by reading the whole table', async () => {
    const { text, params } = await firstQueryOf(app, (db) => claimEvents(db, 'planner', 8, 60_000));
    const nodes = await planNodes(app, text, params);
    expect(
      nodes.filter((n) => n['Relation Name'] === 'events').map((n) => n['Node Type']),
    ).not.toContain('Seq Scan');
  });
});
