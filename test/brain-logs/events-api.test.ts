import { createHash } from 'node:crypto';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventJson } from '../../src/events/event-object.js';
import type { EventPage } from '../../src/brain-logs/event-pages.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let orders: ChannelJson;
let refunds: ChannelJson;

beforeAll(async () => {
  orders = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
  refunds = await driver.createChannel({ name: 'Refunds', template: 'Refund {{id}}' });
});

/** Stores an event as if received at `receivedAt` (a timestamptz literal, microseconds allowed). */
async function storedAt(
  channel: ChannelJson,
  receivedAt: string,
  status = 'replied',
  workspaceId = app.ctx.defaultWorkspaceId,
) {
  const { rows } = await app.ctx.db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, received_at, status, payload, attempts)
     values ($1, $2, $3::timestamptz, $4, $5, 0) returning id`,
    [workspaceId, channel.id, receivedAt, status, JSON.stringify({ at: receivedAt })],
  );
  return rows[0]?.id as string;
}

async function list(query: Record<string, string>, apiDriver = driver): Promise<EventPage> {
  const res = await apiDriver.api('get', `/events?${new URLSearchParams(query)}`);
  expect(res.status, res.text).toBe(200);
  return res.body as EventPage;
}

async function allPages(
  query: Record<string, string>,
  between?: () => Promise<void>,
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: EventPage = await list(cursor ? { ...query, cursor } : query);
    ids.push(...page.data.map((event) => event.id));
    cursor = page.next_cursor;
    await between?.();
  } while (cursor);
  return ids;
}

describe('GET /api/v1/events/{id}', () => {
  it('shows the raw payload as received, and the prompt and reply once the worker ran (webhook to Brain Logs)', async () => {
    const body = '{"order":{"id":9007199254740993, "total": 1.50}}';
    const sent = await driver.sendEvent(orders.webhook_url, body);
    const id = sent.body.event_id as string;

    const pending = await driver.api('get', `/events/${id}`);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      id,
      channel_id: orders.id,
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      status: 'pending',
      payload: body,
      payload_truncated: false,
      prompt: null,
      reply: null,
      error: null,
      attempts: 0,
      completed_at: null,
      headers: expect.objectContaining({ 'content-type': 'application/json' }),
      sender_ip: '127.0.0.1',
      duplicates: 0,
      delivery: null,
      model: null,
      provider: null,
      usage: null,
      calls: [],
      tool_calls: [],
      attachments: [],
      approval: null,
      latency_ms: null,
      cost_usd: null,
      thread_key: null,
      version: null,
      missing: [],
      input_truncated: false,
      redactions: null,
      history: [],
      trace_id: null,
      cached_from: null,
      deliveries: [],
    } satisfies Record<keyof EventJson, unknown>);

    await createWorker(app.ctx).runOnce();

    const replied = await driver.api('get', `/events/${id}`);
    expect(replied.body).toMatchObject({
      status: 'replied',
      payload: body,
      prompt: 'Order 9007199254740993',
      reply: '[echo stand-in — no AI model configured] You wrote: Order 9007199254740993',
      attempts: 1,
      completed_at: expect.stringMatching(/Z$/),
      model: null,
      usage: null,
      version: 1,
      missing: [],
    });
    const listed = await list({ channel_id: orders.id, status: 'replied' });
    expect(listed.data[0]).toEqual(replied.body);
  });

  it('answers 404 problem+json for an unknown or impossible id', async () => {
    for (const id of ['999999999', 'abc', "1' or '1'='1", '0', '99999999999999999999999']) {
      const res = await driver.api('get', `/events/${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('GET /api/v1/events', () => {
  it('lists newest first and filters by channel and status', async () => {
    const a = await storedAt(orders, '2021-03-01T10:00:00Z', 'replied');
    const b = await storedAt(refunds, '2021-03-01T10:01:00Z', 'failed');
    const c = await storedAt(orders, '2021-03-01T10:02:00Z', 'skipped');
    const window = { from: '2021-03-01T00:00:00Z', to: '2021-03-02T00:00:00Z' };

    expect((await list(window)).data.map((e) => e.id)).toEqual([c, b, a]);
    expect((await list({ ...window, channel_id: orders.id })).data.map((e) => e.id)).toEqual([
      c,
      a,
    ]);
    expect((await list({ ...window, status: 'failed' })).data.map((e) => e.id)).toEqual([b]);
    expect((await list({ ...window, channel_id: orders.id, status: 'failed' })).data).toEqual([]);
  });

  it('bounds received_at with from inclusive and to exclusive, at the microsecond', async () => {
    const before = await storedAt(orders, '2021-04-01T11:59:59.999999Z');
    const atFrom = await storedAt(orders, '2021-04-01T12:00:00Z');
    const inside = await storedAt(orders, '2021-04-01T12:30:00+00:00');
    const justBeforeTo = await storedAt(orders, '2021-04-01T12:59:59.999999Z');
    const atTo = await storedAt(orders, '2021-04-01T13:00:00Z');

    const ids = (await list({ from: '2021-04-01T12:00:00Z', to: '2021-04-01T13:00:00Z' })).data.map(
      (e) => e.id,
    );
    expect(ids).toEqual([justBeforeTo, inside, atFrom]);
    // The same instants written with an offset, and a date meaning its midnight UTC.
    const offset = await list({
      from: '2021-04-01T14:00:00+02:00',
      to: '2021-04-01T14:30:00.000+02:00',
    });
    expect(offset.data.map((e) => e.id)).toEqual([atFrom]);
    expect((await list({ from: '2021-04-01', to: '2021-04-02' })).data.map((e) => e.id)).toEqual([
      atTo,
      justBeforeTo,
      inside,
      atFrom,
      before,
    ]);
  });

  it('pages through a window without skipping or repeating, while new events arrive', async () => {
    const ids: string[] = [];
    // Several events share a millisecond, or even a microsecond: the order falls back to the id.
    for (const at of [
      '2021-05-01T08:00:00.000001Z',
      '2021-05-01T08:00:00.000002Z',
      '2021-05-01T08:00:00.000002Z',
      '2021-05-01T08:00:00.000002Z',
      '2021-05-01T08:00:00.000900Z',
      '2021-05-01T08:00:01Z',
      '2021-05-01T08:00:02Z',
      '2021-05-01T08:00:02Z',
      '2021-05-01T08:00:03Z',
      '2021-05-01T08:00:04Z',
      '2021-05-01T08:00:05Z',
    ]) {
      ids.push(await storedAt(orders, at));
    }
    // Times and ids both grow in insertion order, so newest first is the reverse.
    const expected = [...ids].reverse();

    let arrivals = 0;
    const window = {
      channel_id: orders.id,
      from: '2021-05-01T00:00:00Z',
      to: '2021-05-02T00:00:00Z',
      limit: '3',
    };
    const paged = await allPages(window, async () => {
      // An event arrives between pages, inside the window but newer than every page already read.
      arrivals++;
      await storedAt(orders, new Date(Date.UTC(2021, 4, 1, 9, 0, arrivals)).toISOString());
    });
    expect(paged).toEqual(expected);
    expect(arrivals).toBe(4);
    // A fresh first page shows the newcomers first.
    expect((await list(window)).data).toHaveLength(3);
    expect((await list({ ...window, limit: '500' })).data).toHaveLength(ids.length + arrivals);
  });

  it('gives next_cursor null on the last page and honours limit', async () => {
    const window = { from: '2021-06-01T00:00:00Z', to: '2021-06-02T00:00:00Z' };
    for (let i = 0; i < 5; i++) await storedAt(refunds, `2021-06-01T0${i}:00:00Z`);
    const first = await list({ ...window, limit: '5' });
    expect(first.data).toHaveLength(5);
    expect(first.next_cursor).toBeNull();
    const small = await list({ ...window, limit: '2' });
    expect(small.data).toHaveLength(2);
    expect(small.next_cursor).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));
  });

  it('answers 400 for bad parameters and cursors, and never runs what they smuggle in', async () => {
    const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const validation: Record<string, string>[] = [
      { limit: '0' },
      { limit: '501' },
      { limit: 'ten' },
      { limit: '5; drop table events' },
      { status: 'bogus' },
      { status: "replied' or '1'='1" },
      { from: 'yesterday' },
      { from: "2021-01-01T00:00:00Z'; drop table events; --" },
      { to: '2021-13-01T00:00:00Z' },
      { to: '2021-02-30T00:00:00Z' },
      { from: '0000-01-01T00:00:00Z' },
      { channel_id: 'abc' },
      { channel_id: '1 or 1=1' },
      { unknown: 'x' },
      { cursor: '' },
    ];
    for (const query of validation) {
      const res = await driver.api('get', `/events?${new URLSearchParams(query)}`);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
    }
    const twice = await driver.api('get', '/events?status=replied&status=failed');
    expect(twice.status).toBe(400);

    const cursors = [
      'not a cursor!',
      'AAAA',
      cursorOf({ t: '2021-01-01T00:00:00.000000Z', i: '1) or (1=1' }),
      cursorOf({ t: "2021-01-01T00:00:00.000000Z'--", i: '1' }),
      cursorOf({ t: '2021-02-30T00:00:00.000000Z', i: '1' }),
      cursorOf({ t: '0000-01-01T00:00:00.000000Z', i: '1' }),
      cursorOf(['2021-01-01T00:00:00.000000Z', '1']),
    ];
    for (const cursor of cursors) {
      const res = await driver.api('get', `/events?${new URLSearchParams({ cursor })}`);
      expect(res.status, cursor).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
    }
    const { rows } = await app.ctx.db.query<{ n: string }>('select count(*) as n from events');
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
  });

  it('needs an API key', async () => {
    const res = await request(app.baseUrl).get('/api/v1/events');
    expect(res.status).toBe(401);
  });
});

describe('workspace isolation', () => {
  it('shows a workspace only its own events', async () => {
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into workspaces (name, chat_quota) values ('Other', 10) returning id`,
    );
    const otherWorkspace = rows[0]?.id as string;
    const otherKey = 'other-workspace-key-0123456789';
    await app.ctx.db.query(
      `insert into api_keys (workspace_id, name, prefix, key_hash) values ($1, 'test', 'other', $2)`,
      [otherWorkspace, createHash('sha256').update(otherKey).digest('hex')],
    );
    const other = new Driver(app, otherKey);
    const otherChannel = await other.createChannel({ name: 'Theirs' });
    const theirs = await storedAt(otherChannel, '2021-07-01T10:00:00Z', 'replied', otherWorkspace);
    const ours = await storedAt(orders, '2021-07-01T10:00:00Z');
    const window = { from: '2021-07-01T00:00:00Z', to: '2021-07-02T00:00:00Z' };

    expect((await list(window, other)).data.map((e) => e.id)).toEqual([theirs]);
    expect((await list(window)).data.map((e) => e.id)).toEqual([ours]);
    expect((await other.api('get', `/events/${ours}`)).status).toBe(404);
    expect((await driver.api('get', `/events/${theirs}`)).status).toBe(404);
    expect((await list({ ...window, channel_id: otherChannel.id })).data).toEqual([]);
    expect((await list({ channel_id: orders.id }, other)).data).toEqual([]);
  });
});
