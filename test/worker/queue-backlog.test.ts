import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { claimDeliveries, type ClaimedDelivery } from '../../src/deliveries/queue-claim.js';
import { markDelivered } from '../../src/deliveries/queue-delivered.js';
import { storeEventBatch } from '../../src/hooks/store-event-batch.js';
import { claimEvents } from '../../src/worker/queue-claim.js';
import { finishEvents } from '../../src/worker/queue-finish.js';
import { startAttempts } from '../../src/worker/queue-start-attempt.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

const BACKLOG = 20_000;

/**
 * A worker that has been working through a short queue for a while, then meets a backlog (the
 * AI or a reply receiver was down, or the web tier stores faster than the worker answers): each
 * item it updates must still be found by id, not by reading the whole backlog, or the worker
 * slows down as the backlog grows (see claimEvents). Measured by the queue index entries
 * PostgreSQL's statistics count as read. (A claim itself reads its queue: that is how it finds
 * what is due.)
 */
describe.skipIf(!testDatabaseUrl)(
  'workers meeting a backlog (real PostgreSQL: its statistics count the index entries read)',
  () => {
    const { app, driver } = useTestApp();
    // One connection, as one of the worker's pool: what it prepares stays with it.
    const worker = useFixture<Database>(
      async () => openPostgres({ url: app.database.url as string, max: 1 }),
      { stop: (db) => db.close() },
    );

    /** Entries of `index` read so far, once the worker's connection has reported its counts. */
    const entriesRead = async (index: string) => {
      await worker.query('select pg_stat_force_next_flush()');
      await worker.query('select 1');
      const { rows } = await app.ctx.db.query<{ read: string }>(
        'select idx_tup_read as read from pg_stat_user_indexes where indexrelname = $1',
        [index],
      );
      return Number(rows[0]?.read);
    };

    /** Entries of `index` that `work` reads on the worker's connection. */
    const readBy = async (index: string, work: () => Promise<void>) => {
      const before = await entriesRead(index);
      await work();
      return (await entriesRead(index)) - before;
    };

    it('starts and finishes each event by its id, reading none of the backlog', async () => {
      const channel = await driver.receivingChannel(await driver.createChannel());
      const event = {
        channel,
        payload: '{"order":1}',
        headers: {},
        senderIp: undefined,
        dedupKey: undefined,
      };
      const answerOne = async () => {
        const [claimed] = await claimEvents(worker, 'w1', 1, 60_000);
        if (!claimed) throw new Error('nothing to claim');
        return readBy('events_queue_channel_idx', async () => {
          const start = {
            eventId: claimed.id,
            prompt: 'prompt',
            missing: [],
            provider: 'default',
            model: null,
          };
          await startAttempts(worker, 'w1', 60_000, [start]);
          const outcome = { status: 'replied', reply: 'ok' } as const;
          const ended = await finishEvents(worker, 'w1', [{ eventId: claimed.id, outcome }]);
          expect(ended.has(claimed.id)).toBe(true);
        });
      };
      // A short queue, one event at a time: more runs than PostgreSQL makes before it settles
      // on one plan for a statement it keeps.
      for (let i = 0; i < 10; i++) {
        await storeEventBatch(app.ctx.db, [event], Date.now() + 5000);
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

    /**
     * A channel whose replies are delivered, and a function adding messages to its queue, due
     * `dueAgoS` seconds ago.
     */
    const deliveringChannel = async (dueAgoS = 0) => {
      const { id: channelId } = await driver.createChannel();
      await app.ctx.db.query(
        `with reply as (
           insert into destinations (channel_id, role, kind, enabled, url)
           values ($1, 'reply_url', 'webhook', true, 'http://127.0.0.1:9/hook')
         )
         update channels set reply_secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
         where id = $1`,
        [channelId],
      );
      const { rows } = await app.ctx.db.query<{ id: string }>(
        `insert into events (workspace_id, channel_id, status, payload, headers)
         select workspace_id, id, 'replied', '{}', '{}' from channels where id = $1
         returning id`,
        [channelId],
      );
      const eventId = rows[0]?.id;
      return (count: number) =>
        app.ctx.db.query(
          `insert into deliveries (event_id, channel_id, webhook_id, type, run_at)
           select $1, $2, 'msg_' || gen_random_uuid(), 'event.replied',
                  now() - $4::integer * interval '1 second'
           from generate_series(1, $3::integer)`,
          [eventId, channelId, count, dueAgoS],
        );
    };

    it('marks each message delivered by its id, reading none of the backlog', async () => {
      const addMessages = await deliveringChannel();
      const deliverOne = async () => {
        const [claimed] = await claimDeliveries(worker, app.ctx.secrets, 'd1', 1, 60_000);
        if (!claimed) throw new Error('nothing to claim');
        return readBy('deliveries_queue_idx', async () => {
          const sent = {
            deliveryId: claimed.id,
            status: 200,
            durationMs: 5,
            target: null,
            answer: null,
          };
          expect((await markDelivered(worker, 'd1', [sent])).has(claimed.id)).toBe(true);
        });
      };
      for (let i = 0; i < 10; i++) {
        await addMessages(1);
        await deliverOne();
      }
      await addMessages(BACKLOG);

      for (let i = 0; i < 5; i++) expect(await deliverOne()).toBe(0);
    });

    it('claims messages from the head of a backlog, reading none of the rest', async () => {
      // Due earlier than any message the test before left in the queue: these are its head.
      const addMessages = await deliveringChannel(3600);
      const deliverSome = async (limit: number) => {
        let claimed: ClaimedDelivery[] = [];
        const read = await readBy('deliveries_queue_idx', async () => {
          claimed = await claimDeliveries(worker, app.ctx.secrets, 'd1', limit, 60_000);
        });
        const sent = claimed.map((d) => ({
          deliveryId: d.id,
          status: 200,
          durationMs: 5,
          target: null,
          answer: null,
        }));
        expect((await markDelivered(worker, 'd1', sent)).size).toBe(claimed.length);
        return { claimed: claimed.length, read };
      };
      for (let i = 0; i < 10; i++) {
        await addMessages(1);
        await deliverSome(1);
      }
      await addMessages(BACKLOG);

      // The head: the messages claimed, and the ones just delivered before them (until the index
      // drops them); not the 20,000 behind.
      for (let i = 0; i < 5; i++) {
        const { claimed, read } = await deliverSome(8);
        expect(claimed).toBe(8);
        expect(read).toBeLessThan(100);
      }
    });
  },
);
