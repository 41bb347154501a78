import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventJson } from '../../src/events/event-object.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { SseClient, type SseMessage } from '../support/sse-client.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

const { app, driver } = useTestApp();
let orders: ChannelJson;
const open: SseClient[] = [];

beforeAll(async () => {
  orders = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
});

// Runs before the app stops (hooks after tests run in the reverse order of their registration).
afterAll(() => {
  for (const client of open) client.close();
});

async function stream(query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await SseClient.open(`${app.baseUrl}/api/v1/events/stream?${query}`, {
    Authorization: `Bearer ${TEST_ADMIN_KEY}`,
    ...headers,
  });
  open.push(client);
  return client;
}

const about =
  (id: string, status?: string) =>
  (message: SseMessage): boolean => {
    const event = JSON.parse(message.data) as EventJson;
    return event.id === id && (status === undefined || event.status === status);
  };

async function receive(body: unknown): Promise<string> {
  const res = await driver.sendEvent(orders.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

describe('GET /api/v1/events/stream', () => {
  it('sends each stored event and each status change as an `event` message', async () => {
    const client = await stream();
    expect(client.status).toBe(200);
    expect(client.contentType).toMatch(/^text\/event-stream/);
    const id = await receive({ order: { id: 1 } });
    const stored = await client.waitFor(about(id, 'pending'));
    expect(stored.event).toBe('event');
    expect(stored.id).toMatch(/^\d+$/);
    expect(JSON.parse(stored.data)).toMatchObject({
      id,
      channel_id: orders.id,
      payload: '{"order":{"id":1}}',
    });

    await createWorker(app.ctx).runOnce();
    const replied = await client.waitFor(about(id, 'replied'));
    expect(JSON.parse(replied.data)).toMatchObject({ prompt: 'Order 1', attempts: 1 });
    expect(BigInt(replied.id as string)).toBeGreaterThan(BigInt(stored.id as string));
  });

  it('sends only the events of its filter', async () => {
    const paid = await stream('payload.order.status=paid');
    const all = await stream();
    const open = await receive({ order: { id: 2, status: 'open' } });
    const paidId = await receive({ order: { id: 3, status: 'paid' } });
    await paid.waitFor(about(paidId));
    await all.waitFor(about(paidId));
    expect(all.messages.some(about(open))).toBe(true);
    expect(paid.messages.some(about(open))).toBe(false);
    await createWorker(app.ctx).runOnce();
  });

  it('is subscribed by the time it opens: an event stored right after is sent', async () => {
    // The subscription's starting point (the newest change) is read slowly, as on a busy
    // database: the stream must not look open to the client before it is in place.
    const query = app.ctx.db.query.bind(app.ctx.db);
    const slow = vi.spyOn(app.ctx.db, 'query').mockImplementation(async (text, params) => {
      if (text.includes('max(change_seq)')) await new Promise((r) => setTimeout(r, 500));
      return query(text, params);
    });
    try {
      const client = await stream();
      const id = await receive({ order: { id: 6 } });
      await client.waitFor(about(id, 'pending'), 5_000);
      expect(slow).toHaveBeenCalledWith(
        expect.stringContaining('max(change_seq)'),
        expect.anything(),
      );
    } finally {
      slow.mockRestore();
    }
    await createWorker(app.ctx).runOnce();
  });

  it('resumes after Last-Event-ID with each event changed meanwhile, as it is now', async () => {
    const first = await stream();
    const a = await receive({ order: { id: 4 } });
    const seen = await first.waitFor(about(a, 'pending'));
    first.close();

    const b = await receive({ order: { id: 5 } });
    await createWorker(app.ctx).runOnce();

    const resumed = await stream('', { 'Last-Event-ID': seen.id as string });
    await resumed.waitFor(about(a, 'replied'));
    await resumed.waitFor(about(b, 'replied'));
    // Nothing from before Last-Event-ID comes again.
    expect(resumed.messages.some(about(a, 'pending'))).toBe(false);
    expect(
      resumed.messages.map((m) => BigInt(m.id as string) > BigInt(seen.id as string)),
    ).not.toContain(false);
  });

  it("never sends another workspace's events, live or on resuming", async () => {
    const theirs = await app.ctx.workspaces.create('Their workspace', 100);
    const { key } = await app.ctx.apiKeys.create(theirs.id, 'theirs');
    const their = new Driver(app, key);
    const shop = await their.createChannel({ name: 'Their shop', template: 'Order {{order.id}}' });

    const ours = await stream();
    // Their key's own stream: their event does reach a stream, just not ours.
    const them = await SseClient.open(`${app.baseUrl}/api/v1/events/stream`, {
      Authorization: `Bearer ${key}`,
    });
    open.push(them);
    // Naming their channel with our key matches nothing of theirs either.
    const theirChannel = await stream(`channel_id=${shop.id}`);

    const res = await their.sendEvent(shop.webhook_url, { order: { id: 'theirs' } });
    expect(res.status).toBe(200);
    const theirId = res.body.event_id as string;
    const ourId = await receive({ order: { id: 'ours' } });

    await ours.waitFor(about(ourId));
    await them.waitFor(about(theirId));
    expect(them.messages.some(about(ourId))).toBe(false);
    // Stored before ours, so it would have come first.
    expect(ours.messages.some(about(theirId))).toBe(false);
    expect(ours.messages.map((m) => m.data).join('\n')).not.toContain('theirs');

    // Resuming from the very start replays our history only.
    const resumed = await stream('', { 'Last-Event-ID': '0' });
    await resumed.waitFor(about(ourId));
    expect(resumed.messages.some(about(theirId))).toBe(false);
    expect(resumed.messages.map((m) => (JSON.parse(m.data) as EventJson).channel_id)).not.toContain(
      shop.id,
    );

    // A status change of theirs, after ours, sends us nothing either.
    await createWorker(app.ctx).runOnce();
    await them.waitFor(about(theirId, 'replied'));
    await ours.waitFor(about(ourId, 'replied'));
    expect(ours.messages.some(about(theirId))).toBe(false);
    expect(theirChannel.messages).toEqual([]);
  });

  it('needs the API key', async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/events/stream`);
    expect(res.status).toBe(401);
  });
});
