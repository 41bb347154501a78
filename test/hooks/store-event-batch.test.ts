import { createHash } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import {
  EventBatchStore,
  isKeyTaken,
  storeEventBatch,
  type IncomingEvent,
  type StoredEvent,
} from '../../src/hooks/store-event-batch.js';
import type { ReceivingChannel } from '../../src/hooks/ingest-service.js';
import { useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

/**
 * Duplicates and the quota decided within one batch, as the receiver's group commit sends it:
 * a batch can hold a duplicate of a stored event, repeats of one new key, and more events than
 * the workspace has room for, all at once.
 */
describe('storing one batch with duplicates and the quota', () => {
  const { app, driver } = useTestApp();
  let channel: ReceivingChannel;

  beforeAll(async () => {
    channel = await driver.receivingChannel(await driver.createChannel());
  });

  const event = (dedupKey?: string): IncomingEvent => ({
    channel,
    payload: '{"n":1}',
    headers: dedupKey ? { 'webhook-id': dedupKey } : {},
    senderIp: '127.0.0.1',
    dedupKey,
  });
  const store = (events: IncomingEvent[]) =>
    storeEventBatch(app.ctx.db, events, Date.now() + 60_000);
  const chatsUsed = async () => (await driver.api('get', '/workspace')).body.chats_used as number;
  const accepted = (stored: StoredEvent | undefined) => {
    expect(stored).toMatchObject({ outcome: 'accepted' });
    return (stored as { eventId: string }).eventId;
  };

  it('answers a duplicate of a stored event and repeats of a new key, spending a chat per new event', async () => {
    const [stored] = await store([event('stored-key')]);
    const firstId = accepted(stored);
    const before = await chatsUsed();

    const results = await store([
      event('stored-key'),
      event('new-key'),
      event('new-key'),
      event(),
      event('new-key'),
    ]);

    // The stored event's duplicate is counted on it, and answered with it as it stands.
    expect(results[0]).toMatchObject({
      outcome: 'duplicate',
      first: { id: firstId, status: 'pending' },
    });
    const newId = accepted(results[1]);
    expect(results[2]).toEqual({
      outcome: 'duplicate',
      first: { id: newId, status: 'pending', reply: null, error: null },
    });
    accepted(results[3]);
    expect(results[4]).toEqual(results[2]);
    expect(await chatsUsed()).toBe(before + 2);
    expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(1);
    expect((await driver.api('get', `/events/${newId}`)).body.duplicates).toBe(2);
  });

  it('does not let a duplicate take the room of a new event when the quota is nearly used', async () => {
    const [stored] = await store([event('known-key')]);
    const firstId = accepted(stored);
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used + 1 }).expect(200);
    try {
      const results = await store([
        event('known-key'),
        event('fresh-key'),
        event('late-key'),
        event('late-key'),
      ]);

      expect(results[0]).toMatchObject({ outcome: 'duplicate', first: { id: firstId } });
      accepted(results[1]);
      expect(results[2]).toMatchObject({ outcome: 'quota_exceeded' });
      // a repeat shares the fate of the first request with its key
      expect(results[3]).toMatchObject({ outcome: 'quota_exceeded' });
      expect(await chatsUsed()).toBe(used + 1);
      // the refused event did not take its key: it is accepted once there is room again
      await driver.setWorkspace({ chat_quota: used + 2 }).expect(200);
      accepted((await store([event('late-key')]))[0]);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });

  it('refuses a request that uses a key of the batch for another body once the first is stored (422), and records it', async () => {
    const withBody = (key: string, payload: string): IncomingEvent => ({
      ...event(key),
      payload,
      bodyHash: createHash('sha256').update(payload).digest('hex'),
    });
    const before = await chatsUsed();
    const key = 'bodies';

    const results = await store([
      withBody(key, '{"v":1}'),
      withBody(key, '{"v":2}'),
      withBody(key, '{"v":1}'),
      event(),
    ]);

    const firstId = accepted(results[0]);
    expect(results[1]).toMatchObject({ outcome: 'key_reused', firstId });
    expect(results[2]).toMatchObject({ outcome: 'duplicate', first: { id: firstId } });
    accepted(results[3]);
    // Later, against the stored event: the other body is 422 again, the same body a duplicate.
    const later = await store([withBody(key, '{"v":2}'), withBody(key, '{"v":1}')]);
    expect(later[0]).toMatchObject({ outcome: 'key_reused', firstId });
    expect(later[1]).toMatchObject({ outcome: 'duplicate', first: { id: firstId } });
    // the other body was not counted; the repeat in the batch and the later one were
    expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(2);
    expect(await chatsUsed()).toBe(before + 2);
    const reused = (results[1] as { eventId: string }).eventId;
    expect((await driver.api('get', `/events/${reused}`)).body).toMatchObject({
      status: 'rejected',
      error: 'idempotency_key_reused',
      payload: '{"v":2}',
    });
  });

  it('stores a new key and its repeats in the batch as one event with its duplicates counted', async () => {
    const before = await chatsUsed();

    const results = await store([event('repeated-key'), event(), event('repeated-key')]);

    const firstId = accepted(results[0]);
    accepted(results[1]);
    expect(results[2]).toEqual({
      outcome: 'duplicate',
      first: { id: firstId, status: 'pending', reply: null, error: null },
    });
    expect(await chatsUsed()).toBe(before + 2);
    expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(1);
  });

  it('frees a key past its window and stores the request with it, in the same statement', async () => {
    const firstId = accepted((await store([event('expired-key')]))[0]);
    await app.ctx.db.query(
      `update events set dedup_expires_at = now() - interval '1 second' where id = $1`,
      [firstId],
    );

    const [again, repeat] = await store([event('expired-key'), event('expired-key')]);

    const secondId = accepted(again);
    expect(repeat).toMatchObject({ outcome: 'duplicate', first: { id: secondId } });
    expect((await store([event('expired-key')]))[0]).toMatchObject({
      outcome: 'duplicate',
      first: { id: secondId },
    });
    expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(0);
    expect((await driver.api('get', `/events/${secondId}`)).body.duplicates).toBe(2);
  });

  it('records the refusals of a batch as rejected events, and names the quota of a refusal for it', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used }).expect(200);
    try {
      const [refused, overQuota] = await store([
        { ...event(), payload: '{"start', refusal: 'invalid_json', payloadTruncated: true },
        event(),
      ]);

      expect(refused).toMatchObject({ outcome: 'rejected' });
      expect(overQuota).toMatchObject({
        outcome: 'quota_exceeded',
        quota: { chatQuota: used, resetsAt: expect.any(Date) },
      });
      const ids = [refused, overQuota].map((r) => (r as { eventId: string }).eventId);
      const rows = await Promise.all(ids.map((id) => driver.api('get', `/events/${id}`)));
      expect(rows.map((r) => r.body)).toMatchObject([
        { status: 'rejected', error: 'invalid_json', payload_truncated: true, payload: '{"start' },
        { status: 'rejected', error: 'quota_exceeded', payload_truncated: false },
      ]);
      expect(await chatsUsed()).toBe(used);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });

  it('finding keys on insert, fails a batch with a taken key whole, storing nothing of it', async () => {
    accepted((await store([event('taken-key')]))[0]);
    const [events, chats] = [await eventCount(), await chatsUsed()];

    const failed = storeEventBatch(
      app.ctx.db,
      [event(), event('taken-key'), event('untaken-key')],
      Date.now() + 60_000,
      'on-insert',
    );

    const error = await failed.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isKeyTaken(error)).toBe(true);
    expect(await eventCount()).toBe(events);
    expect(await chatsUsed()).toBe(chats);
    accepted((await store([event('untaken-key')]))[0]);
  });

  it('finding keys on insert, answers repeats as duplicates while the quota or the budget is used up', async () => {
    const onInsert = (events: IncomingEvent[]) =>
      storeEventBatch(app.ctx.db, events, Date.now() + 60_000, 'on-insert');
    const firstId = accepted((await onInsert([event('spent-key')]))[0]);
    const used = await chatsUsed();
    const duplicate = { outcome: 'duplicate', first: { id: firstId } };
    try {
      await driver.setWorkspace({ chat_quota: used }).expect(200);
      const [repeat, fresh] = await onInsert([event('spent-key'), event('spent-fresh')]);
      expect(repeat).toMatchObject(duplicate);
      expect(fresh).toMatchObject({ outcome: 'quota_exceeded' });

      // Room for one request of three: the repeat takes none of it.
      await driver.setWorkspace({ chat_quota: used + 1 }).expect(200);
      const [second, again, third] = await onInsert([
        event('spent-second'),
        event('spent-key'),
        event('spent-third'),
      ]);
      accepted(second);
      expect(again).toMatchObject(duplicate);
      expect(third).toMatchObject({ outcome: 'quota_exceeded' });

      await driver.setWorkspace({ chat_quota: 1000, monthly_budget_usd: 0 }).expect(200);
      const [overBudget, afterBudget] = await onInsert([event('spent-key'), event('spent-fourth')]);
      expect(overBudget).toMatchObject(duplicate);
      expect(afterBudget).toMatchObject({ outcome: 'budget_exceeded' });
      expect((await driver.api('get', `/events/${firstId}`)).body.duplicates).toBe(3);
      expect(await chatsUsed()).toBe(used + 1);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000, monthly_budget_usd: null }).expect(200);
    }
  });

  it("stores the receiver's batches finding keys on insert until one is taken, then looking them up for a while", async () => {
    const statements: string[] = [];
    const recording: Queryable = {
      query: (text, params, options) => {
        statements.push(options?.name ?? 'unnamed');
        return app.ctx.db.query(text, params, options);
      },
    };
    const receiver = new EventBatchStore(recording);
    const storeAsReceiver = (events: IncomingEvent[]) =>
      receiver.store(events, Date.now() + 60_000);

    const [first] = await storeAsReceiver([event('store-key-1')]);
    const firstId = accepted(first);
    expect(statements.splice(0)).toEqual(['store-event-batch-on-insert']);

    const [events, chats] = [await eventCount(), await chatsUsed()];
    const results = await storeAsReceiver([event('store-key-1'), event('store-key-2')]);
    // The statement failed on the taken key; the batch was stored again, its keys looked up.
    expect(statements.splice(0)).toEqual([
      'store-event-batch-on-insert',
      'store-event-batch-looked-up',
    ]);
    expect(results[0]).toMatchObject({ outcome: 'duplicate', first: { id: firstId } });
    accepted(results[1]);
    expect(await eventCount()).toBe(events + 1);
    expect(await chatsUsed()).toBe(chats + 1);

    accepted((await storeAsReceiver([event('store-key-3')]))[0]);
    expect(statements.splice(0)).toEqual(['store-event-batch-looked-up']);
  });

  it('stores each payload of a batch byte for byte, whatever its characters', async () => {
    const payloads = [
      '{"dessert":"crème brûlée 🍮"}',
      '\uFEFF{"key":"ключ","empty":""}',
      '{"escapes":"\\u0000 \\" \\\\","n":1}',
      '{}',
    ];
    const results = await store(payloads.map((payload) => ({ ...event(), payload })));

    const ids = results.map(accepted);
    // Compared as bytes: the embedded database's driver drops a leading byte-order mark from
    // the text it returns, though the stored bytes keep it.
    const { rows } = await app.ctx.db.query<{ id: string; bytes: string }>(
      `select id::text, encode(convert_to(payload, 'UTF8'), 'hex') as bytes
       from events where id = any($1::bigint[])`,
      [ids],
    );
    const stored = new Map(rows.map((row) => [row.id, row.bytes]));
    expect(ids.map((id) => stored.get(id))).toEqual(
      payloads.map((payload) => Buffer.from(payload).toString('hex')),
    );
  });

  /** Sends the statement whatever its deadline: only the statement's own limits apply. */
  const unbounded = (): Queryable => ({ query: (text, params) => app.ctx.db.query(text, params) });
  const eventCount = async () =>
    Number(
      (
        await app.ctx.db.query<{ n: string }>(
          'select count(*) as n from events where channel_id = $1',
          [channel.id],
        )
      ).rows[0]?.n,
    );

  it('commits nothing once its deadline has passed, though nothing else stops it', async () => {
    const [events, chats] = [await eventCount(), await chatsUsed()];

    const late = storeEventBatch(unbounded(), [event(), event('late-key-2')], Date.now() - 1);

    await expect(late).rejects.toMatchObject({ code: '57014' });
    expect(await eventCount()).toBe(events);
    expect(await chatsUsed()).toBe(chats);
    // Its key was not claimed either.
    accepted((await store([event('late-key-2')]))[0]);
  });

  it.skipIf(!testDatabaseUrl)(
    'waits for a locked quota row only until its deadline, and stores nothing',
    async () => {
      const events = await eventCount();
      const locker = new pg.Client({ connectionString: app.database.url });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('select from workspaces where id = $1 for update', [
          channel.workspace_id,
        ]);
        const started = performance.now();

        const waiting = storeEventBatch(unbounded(), [event()], Date.now() + 300);

        await expect(waiting).rejects.toMatchObject({ code: '55P03' });
        expect(performance.now() - started).toBeLessThan(300 + 500);
        await locker.query('commit');
        expect(await eventCount()).toBe(events);
      } finally {
        await locker.end();
      }
    },
  );
});
