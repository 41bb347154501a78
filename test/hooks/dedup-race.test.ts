import { createHash } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import {
  EventBatchStore,
  isKeyTaken,
  storeEventBatch,
  type IncomingEvent,
} from '../../src/hooks/store-event-batch.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

/**
 * Two transactions claim one dedup key at the same moment, as two instances' batches do: the
 * second waits on the first's key, fails, and is sent again: it must come out a duplicate of the
 * event it could not see, counted on that event, with nothing stored and no quota spent.
 */
describe.skipIf(!testDatabaseUrl)(
  'two batches racing for one dedup key (real PostgreSQL only: PGlite runs one statement at a time)',
  () => {
    const { app, driver } = useTestApp();
    /** A connection of its own to the app's database, as another instance's batch has. */
    const connection = () =>
      useFixture(
        async () => {
          const client = new pg.Client({ connectionString: app.database.url });
          await client.connect();
          return client;
        },
        { stop: (client) => client.end() },
      );
    const first = connection();
    const second = connection();

    /** Polls (bounded) until the backend waits on a lock: the second batch reached the key. */
    const waitUntilBlocked = async (pid: number) => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await app.ctx.db.query<{ waiting: boolean }>(
          `select wait_event_type = 'Lock' as waiting from pg_stat_activity where pid = $1`,
          [pid],
        );
        if (rows[0]?.waiting) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('the second batch never waited for the first one');
    };

    const on = (client: pg.Client): Queryable => ({
      query: async (text, params) => {
        const result = await client.query(text, params as unknown[]);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      },
    });

    const racedEvent =
      (channel: IncomingEvent['channel'], key: string) =>
      (n: number): IncomingEvent => ({
        channel,
        payload: `{"n":${n}}`,
        headers: { 'webhook-id': key },
        senderIp: '127.0.0.1',
        dedupKey: key,
      });

    it('makes the later one a duplicate of the earlier, counted once it commits', async () => {
      const channel = await driver.createChannel();
      const event = racedEvent(await driver.receivingChannel(channel), 'raced');
      const chatsBefore = (await driver.api('get', '/workspace')).body.chats_used as number;

      const secondPid = (await second.query('select pg_backend_pid() as pid')).rows[0].pid;
      await first.query('begin');
      const [won] = await storeEventBatch(on(first), [event(1)], Date.now() + 60_000);
      expect(won).toMatchObject({ outcome: 'accepted' });
      // The second batch blocks on the first's uncommitted key...
      const racing = new EventBatchStore(on(second)).store(
        [event(2), event(3)],
        Date.now() + 60_000,
      );
      await waitUntilBlocked(secondPid);
      await first.query('commit');
      // ...fails on the key taken by an event its snapshot could not see, and is sent again:
      // both are duplicates of that event, counted on it.
      const lost = await racing;
      const firstId = (won as { eventId: string }).eventId;
      const duplicate = { outcome: 'duplicate', first: { id: firstId, status: 'pending' } };
      expect(lost).toMatchObject([duplicate, duplicate]);
      const events = await driver.api('get', `/events/${firstId}`);
      expect(events.body.duplicates).toBe(2);
      expect((await driver.eventsOf(channel.id)).map((e) => e.id)).toEqual([firstId]);
      expect((await driver.api('get', '/workspace')).body.chats_used).toBe(chatsBefore + 1);
    });

    it('tells the later one with another body apart once the earlier commits: not counted', async () => {
      const channel = await driver.createChannel();
      const keyed = racedEvent(await driver.receivingChannel(channel), 'raced-bodies');
      const event = (n: number): IncomingEvent => ({
        ...keyed(n),
        bodyHash: createHash('sha256').update(keyed(n).payload).digest('hex'),
      });

      const secondPid = (await second.query('select pg_backend_pid() as pid')).rows[0].pid;
      await first.query('begin');
      const [won] = await storeEventBatch(on(first), [event(1)], Date.now() + 60_000);
      const racing = new EventBatchStore(on(second)).store(
        [event(2), event(1)],
        Date.now() + 60_000,
      );
      await waitUntilBlocked(secondPid);
      await first.query('commit');
      const lost = await racing;

      const firstId = (won as { eventId: string }).eventId;
      expect(lost).toMatchObject([
        { outcome: 'key_reused', firstId },
        { outcome: 'duplicate', first: { id: firstId } },
      ]);
      expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(1);
      // The other body is recorded as rejected, as the receiver records every refusal.
      expect((await driver.eventsOf(channel.id)).map((e) => [e.id, e.status])).toEqual([
        [firstId, 'pending'],
        [(lost[0] as { eventId: string }).eventId, 'rejected'],
      ]);
    });

    it('fails the later statement whole, storing nothing of it, once the earlier commits', async () => {
      const channel = await driver.createChannel();
      const event = racedEvent(await driver.receivingChannel(channel), 'raced-unchecked');

      const secondPid = (await second.query('select pg_backend_pid() as pid')).rows[0].pid;
      await first.query('begin');
      const [won] = await storeEventBatch(on(first), [event(1)], Date.now() + 60_000);
      const racing = storeEventBatch(
        on(second),
        [event(2), { ...event(3), dedupKey: undefined }],
        Date.now() + 60_000,
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitUntilBlocked(secondPid);
      await first.query('commit');

      expect(isKeyTaken(await racing)).toBe(true);
      const firstId = (won as { eventId: string }).eventId;
      expect((await driver.eventsOf(channel.id)).map((e) => e.id)).toEqual([firstId]);
    });
  },
);
