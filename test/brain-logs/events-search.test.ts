import { beforeAll, describe, expect, it } from 'vitest';
import type { EventPage } from '../../src/brain-logs/event-pages.js';
import { parsePayload, renderTemplate } from '../../src/template/index.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let orders: ChannelJson;
let refunds: ChannelJson;
const ids: Record<string, string> = {};

async function send(name: string, channel: ChannelJson, body: unknown) {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  ids[name] = res.body.event_id as string;
}

beforeAll(async () => {
  orders = await driver.createChannel({
    name: 'Orders',
    template: 'Order {{order.id}} is {{order.status}}',
  });
  refunds = await driver.createChannel({ name: 'Refunds', template: 'Refund {{id}}' });
  await send('paid', orders, {
    order: { id: 1, status: 'paid', total: 1.5 },
    note: 'Blue Umbrella',
  });
  await send('open', orders, '{"order":{"id":2,"status":"open","total":1.50}}');
  await send('paidBig', orders, '{"order":{"id":9007199254740993,"status":"paid"},"vip":true}');
  await send('items', orders, {
    order: { id: 4, status: 'paid' },
    items: [{ sku: 'A-1' }, { sku: 'B-2' }],
  });
  await send('flat', refunds, { 'order.status': 'paid', id: 'r-1' });
  await send('literal', refunds, '{"id":"r-2","total":1.50,"meta":{"a":1}}');
  // A refused request (invalid JSON) is stored as rejected, with its code as the error.
  const bad = await driver.sendEvent(refunds.webhook_url, '{"id": "broken');
  expect(bad.status).toBe(400);
  await createWorker(app.ctx).runOnce();
});

async function search(query: Record<string, string>): Promise<string[]> {
  const res = await driver.api('get', `/events?${new URLSearchParams(query)}`);
  expect(res.status, res.text).toBe(200);
  return (res.body as EventPage).data.map((event) => event.id);
}

/** Whether the template engine falls back to flat keys (`{"order.status": …}`). */
const flatKeysRender = renderTemplate('{{a.b}}', parsePayload('{"a.b":"x"}')) === 'x';

const named = (...names: string[]) => names.map((name) => ids[name]);

describe('GET /api/v1/events?q=', () => {
  it('finds text in the payload without regard to case', async () => {
    expect(await search({ q: 'blue umbrella' })).toEqual(named('paid'));
    expect(await search({ q: 'UMBRELLA' })).toEqual(named('paid'));
  });

  it('finds text in the prompt and in the reply', async () => {
    // The prompt is rendered: "Order 2 is open" appears in no payload.
    expect(await search({ q: 'order 2 is open' })).toEqual(named('open'));
    const replied = await driver.api('get', `/events/${ids.open}`);
    const reply = String(replied.body.reply);
    expect(reply.length).toBeGreaterThan(5);
    expect(await search({ q: reply.slice(0, 40), channel_id: orders.id })).toContain(ids.open);
  });

  it('finds text in the error of a refused request', async () => {
    const found = await search({ q: 'INVALID_JSON' });
    expect(found).toHaveLength(1);
    const event = await driver.api('get', `/events/${found[0]}`);
    expect(event.body).toMatchObject({ status: 'rejected', error: 'invalid_json' });
  });

  it('treats % and _ as plain characters', async () => {
    expect(await search({ q: '%' })).toEqual([]);
    expect(await search({ q: 'r_1' })).toEqual([]);
    expect(await search({ q: 'r-1' })).toEqual(named('flat'));
  });

  it('combines with the other filters', async () => {
    expect(await search({ q: 'paid', channel_id: refunds.id })).toEqual(named('flat'));
    expect(await search({ q: 'paid', status: 'rejected' })).toEqual([]);
  });
});

describe('GET /api/v1/events?payload.<path>=<value>', () => {
  it('matches what {{path}} renders, exactly', async () => {
    expect(await search({ 'payload.order.status': 'paid', channel_id: orders.id })).toEqual(
      named('items', 'paidBig', 'paid'),
    );
    expect(await search({ 'payload.order.status': 'pai' })).toEqual([]);
    expect(await search({ 'payload.order.status': 'PAID' })).toEqual([]);
  });

  it('renders numbers as written in the body', async () => {
    expect(await search({ 'payload.order.id': '9007199254740993' })).toEqual(named('paidBig'));
    expect(await search({ 'payload.order.total': '1.50' })).toEqual(named('open'));
    expect(await search({ 'payload.order.total': '1.5' })).toEqual(named('paid'));
    expect(await search({ 'payload.total': '1.50' })).toEqual(named('literal'));
  });

  it('renders true, objects as JSON text, and array indexes', async () => {
    expect(await search({ 'payload.vip': 'true' })).toEqual(named('paidBig'));
    expect(await search({ 'payload.meta': '{"a":1}' })).toEqual(named('literal'));
    expect(await search({ 'payload.items.1.sku': 'B-2' })).toEqual(named('items'));
    expect(await search({ 'payload.items.0.sku': 'B-2' })).toEqual([]);
  });

  it('matches absent fields with an empty value', async () => {
    expect(await search({ 'payload.vip': '', channel_id: orders.id })).toEqual(
      named('items', 'open', 'paid'),
    );
  });

  it('ANDs several conditions, and with q and channel', async () => {
    expect(await search({ 'payload.order.status': 'paid', 'payload.order.id': '4' })).toEqual(
      named('items'),
    );
    expect(
      await search({ 'payload.order.status': 'paid', q: 'umbrella', channel_id: orders.id }),
    ).toEqual(named('paid'));
  });

  it.runIf(flatKeysRender)(
    'reads a flat key such as "order.status" as {{order.status}} does',
    async () => {
      expect(await search({ 'payload.order.status': 'paid', channel_id: refunds.id })).toEqual(
        named('flat'),
      );
    },
  );

  it('pages through matches with the cursor', async () => {
    const query = `payload.order.status=paid&channel_id=${orders.id}&limit=2`;
    const first = await driver.api('get', `/events?${query}`);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(named('items', 'paidBig'));
    const second = await driver.api('get', `/events?${query}&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual(named('paid'));
    expect(second.body.next_cursor).toBeNull();
  });

  it('refuses a path with braces or a condition given twice', async () => {
    const braces = await driver.api('get', '/events?payload.%7B%7Bx%7D%7D=1');
    expect(braces.status).toBe(400);
    expect(braces.body.code).toBe('validation_failed');
    const twice = await driver.api('get', '/events?payload.a=1&payload.a=2');
    expect(twice.status).toBe(400);
  });
});

describe('GET /api/v1/events?thread_key=', () => {
  it('lists the events of one thread', async () => {
    await app.ctx.db.query(`update events set thread_key = 'customer-7' where id = any($1)`, [
      named('paid', 'open'),
    ]);
    expect(await search({ thread_key: 'customer-7' })).toEqual(named('open', 'paid'));
    expect(await search({ thread_key: 'customer-8' })).toEqual([]);
  });
});
