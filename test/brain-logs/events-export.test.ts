import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventJson } from '../../src/events/event-object.js';
import type { EventPage } from '../../src/brain-logs/event-pages.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

const { app, driver } = useTestApp();
let orders: ChannelJson;
let all: EventJson[];

const COLUMNS = [
  'id',
  'channel_id',
  'received_at',
  'status',
  'payload',
  'prompt',
  'reply',
  'error',
  'attempts',
  'completed_at',
];

beforeAll(async () => {
  orders = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
  const other = await driver.createChannel({ name: 'Other', template: 'x' });
  // Bodies a CSV writer must quote: commas, quotes, new lines, non-ASCII, an empty string.
  await driver.sendEvent(orders.webhook_url, '{"order":{"id":1,"note":"a, \\"quoted\\"\\nline"}}');
  await driver.sendEvent(orders.webhook_url, '{"order":{"id":2,"note":"café ☕"}}\n');
  await driver.sendEvent(orders.webhook_url, '{"order":{"id":3,"status":"paid"}}');
  await driver.sendEvent(orders.webhook_url, 'not json');
  await driver.sendEvent(other.webhook_url, { elsewhere: true });
  await createWorker(app.ctx).runOnce();
  const page = await driver.api('get', `/events?channel_id=${orders.id}`);
  all = (page.body as EventPage).data;
  expect(all).toHaveLength(4);
});

async function download(query: string) {
  const res = await fetch(`${app.baseUrl}/api/v1/events/export?${query}`, {
    headers: { Authorization: `Bearer ${TEST_ADMIN_KEY}` },
  });
  return { res, text: await res.text() };
}

describe('GET /api/v1/events/export', () => {
  it('writes CSV that a CSV parser reads back as the events of the filter', async () => {
    const { res, text } = await download(`format=csv&channel_id=${orders.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/);
    const records = parse(text, { columns: false }) as string[][];
    expect(records[0]).toEqual(COLUMNS);
    const expected = all.map((event) =>
      COLUMNS.map((column) => {
        const value = event[column as keyof EventJson];
        return value === null ? '' : String(value);
      }),
    );
    expect(records.slice(1)).toEqual(expected);
  });

  it('writes JSON Lines: one event object a line, the same as the API shows', async () => {
    const { res, text } = await download(`format=jsonl&channel_id=${orders.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jsonl/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.jsonl"$/);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual(all);
  });

  it('applies q, payload and status filters', async () => {
    const paid = await download(`format=jsonl&payload.order.status=paid`);
    expect(
      paid.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).payload),
    ).toEqual(['{"order":{"id":3,"status":"paid"}}']);
    const cafe = await download(`format=csv&q=CAF`);
    expect((parse(cafe.text) as string[][]).length).toBe(2);
    const rejected = await download(`format=jsonl&status=rejected`);
    expect(rejected.text.trim().split('\n')).toHaveLength(1);
  });

  it('writes only the header for a filter with no events', async () => {
    const { text } = await download(`format=csv&q=nothing-like-this`);
    expect(parse(text)).toEqual([COLUMNS]);
    expect((await download('format=jsonl&q=nothing-like-this')).text).toBe('');
  });

  it('refuses an unknown format and needs the API key', async () => {
    expect((await download('format=xml')).res.status).toBe(400);
    const anonymous = await fetch(`${app.baseUrl}/api/v1/events/export?format=csv`);
    expect(anonymous.status).toBe(401);
  });

  it('streams more events than one batch, each once, newest first', async () => {
    const bulk = await driver.createChannel({ name: 'Bulk', template: 'b' });
    await app.ctx.db.query(
      `insert into events (workspace_id, channel_id, received_at, status, payload)
       select $1, $2, now() - n * interval '1 second', 'skipped', '{"n":' || n || '}'
       from generate_series(1, 1234) n`,
      [app.ctx.defaultWorkspaceId, bulk.id],
    );
    const { text } = await download(`format=jsonl&channel_id=${bulk.id}`);
    const ns = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(JSON.parse(line).payload).n as number);
    expect(ns).toEqual(Array.from({ length: 1234 }, (_, i) => i + 1));
  });
});
