import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { storeEventBatch } from '../../src/hooks/store-event-batch.js';
import { claimEvents } from '../../src/worker/queue-claim.js';
import { finishEvents } from '../../src/worker/queue-finish.js';
import { startAttempts } from '../../src/worker/queue-start-attempt.js';
import { Driver } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

const BACKLOG = 20_000;

/**
 * A worker that has been answering a short queue for a while, then meets a backlog (the AI was
 * down, or the web tier stores faster than the worker answers): each event it starts and
 * finishes must still be found by id, not by reading the whole backlog, or the worker slows
 * down as the backlog grows (see claimEvents). Measured by the queue index entries PostgreSQL's
 * statistics count as read. (The claim itself reads the queue: that is how it finds due events.)
 */
describe.skipIf(!testDatabaseUrl)(
  'the worker meeting a backlog (real PostgreSQL: its statistics count the index entries read)',
  () => {
    let app: TestApp;
    let worker: Database;

    beforeAll(async () => {
      app = await startTestApp();
      // One connection, as one of the worker's pool: what it prepares stays with it.
      worker = openPostgres({ url: app.database.url, max: 1 });
    });
    afterAll(async () => {
      await worker.close();
      await app.close();
    });

    /** Queue index entries read so far, once the worker's connection has reported its counts. */
    const queueEntriesRead = async () => {
      await worker.query('select pg_stat_force_next_flush()');
      await worker.query('select 1');
      const { rows } = await app.ctx.db.query<{ read: string }>(
        `select idx_tup_read as read from pg_stat_user_indexes
         where indexrelname = 'events_queue_channel_idx'`,
      );
      return Number(rows[0]?.read);
    };

    /**
     * Claims one event on the worker's connection, starts and finishes it there, and says how
     * many queue index entries starting and finishing it read.
     */
    const answerOne = async (): Promise<number> => {
      const [event] = await claimEvents(worker, 'w1', 1, 60_000);
      if (!event) throw new Error('nothing to claim');
      const before = await queueEntriesRead();
      const start = { eventId: event.id, prompt: 'prompt', missing: [], model: null };
      await startAttempts(worker, 'w1', 60_000, [start]);
      const ended = await finishEvents(worker, 'w1', [
        { eventId: event.id, outcome: { status: 'replied', reply: 'ok' } },
      ]);
      expect(ended.has(event.id)).toBe(true);
      return (await queueEntriesRead()) - before;
    };

    it('starts and finishes each event by its id, reading none of the backlog', async () => {
      const driver = new Driver(app);
      const channel = await driver.receivingChannel(await driver.createChannel());
      const event = { channel, payload: '{"order":1}', headers: {}, senderIp: undefined };
      // A short queue, answered one event at a time: more runs than PostgreSQL makes before it
      // settles on one plan for a statement it keeps.
      for (let i = 0; i < 10; i++) {
        await storeEventBatch(app.ctx.db, [{ ...event, dedupKey: undefined }], Date.now() + 5000);
        await answerOne();
      }
      await app.ctx.db.query(
        `insert into events (workspace_id, channel_id, status, payload, headers)
         select $1, $2, 'pending', '{"order":2}', '{}' from generate_series(1, $3::integer)`,
        [channel.workspace_id, channel.id, BACKLOG],
      );

      // Reading the backlog would be 20,000 entries for each statement.
      for (let i = 0; i < 5; i++) expect(await answerOne()).toBe(0);
    });
  },
);
