import { beforeAll, expect } from 'vitest';
import type { ReceivingChannel } from '../../../src/hooks/ingest-service.js';
import {
  storeEventBatch,
  type IncomingEvent,
  type KeyCheck,
  type StoredEvent,
} from '../../../src/hooks/store-event-batch.js';
import { useTestApp } from '../../support/harness.js';

/** A stored event's row as the statement wrote it. */
export interface EventRow {
  status: string;
  error: string | null;
  payload: string;
  duplicates: number;
  thread_key: string | null;
  dedup_key: string | null;
}

/**
 * A test file of one fragment of the store statement: its own database and channel, requests as
 * the pipeline hands them over, and the rows and chats the statement leaves.
 */
export function useBatchStatement() {
  const { app, driver } = useTestApp();
  let channel: ReceivingChannel;

  beforeAll(async () => {
    channel = await driver.receivingChannel(await driver.createChannel());
  });

  const event = (changes: Partial<IncomingEvent> = {}): IncomingEvent => ({
    channel,
    payload: '{"order":{"id":1}}',
    headers: changes.dedupKey ? { 'webhook-id': changes.dedupKey } : {},
    senderIp: '127.0.0.1',
    ...changes,
  });
  const store = (events: IncomingEvent[], keys?: KeyCheck) =>
    storeEventBatch(app.ctx.db, events, Date.now() + 60_000, keys);
  const chatsUsed = async () => (await driver.api('get', '/workspace')).body.chats_used as number;
  const eventRow = async (id: string) => {
    const { rows } = await app.ctx.db.query<EventRow>(
      `select status, error, payload, duplicates, thread_key, dedup_key from events where id = $1`,
      [id],
    );
    return rows[0];
  };
  const eventCount = async () => {
    const { rows } = await app.ctx.db.query<{ n: number }>(
      'select count(*)::integer as n from events where channel_id = $1',
      [channel.id],
    );
    return rows[0]?.n ?? 0;
  };
  /** The id of an event the statement stored, checking its outcome. */
  const storedAs = (outcome: string, stored: StoredEvent | undefined) => {
    expect(stored).toMatchObject({ outcome, eventId: expect.any(String) });
    return (stored as { eventId: string }).eventId;
  };

  return {
    app,
    driver,
    channel: () => channel,
    event,
    store,
    chatsUsed,
    eventRow,
    eventCount,
    storedAs,
  };
}
