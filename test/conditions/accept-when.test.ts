import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true' },
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
  await driver.setWorkspace({ chats_used: 0, chat_quota: 1000 }).expect(200);
});

const ONLY_ORDERS = [
  { path: 'payload.type', op: 'eq', value: 'order.created' },
  { path: 'payload.total', op: 'gte', value: 10 },
];

async function ordersChannel(extra: Record<string, unknown> = {}) {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Orders', template: 'Order {{id}}', accept_when: ONLY_ORDERS, ...extra });
  expect(res.status).toBe(201);
  return res.body as ChannelJson & { accept_when: unknown[] };
}

const chatsUsed = async () =>
  (await driver.api('get', '/workspace').expect(200)).body.chats_used as number;

describe('accept_when in the API', () => {
  it('is stored, shown, replaced by a PATCH and cleared with null', async () => {
    const channel = await ordersChannel();
    expect(channel.accept_when).toEqual(ONLY_ORDERS);
    expect(
      (await driver.api('get', `/channels/${channel.id}`).expect(200)).body.accept_when,
    ).toEqual(ONLY_ORDERS);
    const patched = await driver
      .updateChannel(channel.id, { accept_when: [{ path: 'payload.id', op: 'exists' }] })
      .expect(200);
    expect(patched.body.accept_when).toEqual([{ path: 'payload.id', op: 'exists' }]);
    const cleared = await driver.updateChannel(channel.id, { accept_when: null }).expect(200);
    expect(cleared.body.accept_when).toEqual([]);
    const plain = await driver.createChannel();
    expect((plain as unknown as { accept_when: unknown }).accept_when).toEqual([]);
  });

  it('refuses conditions that cannot be read, naming them', async () => {
    const channel = await ordersChannel();
    const res = await driver.updateChannel(channel.id, {
      accept_when: [
        { path: 'type', op: 'eq', value: 'x' },
        { path: 'payload.n', op: 'gt' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([
      'accept_when.0.path',
      'accept_when.1.value',
    ]);
  });
});

describe('a payload accept_when does not accept', () => {
  it('is stored filtered: no chat, no AI call, no delivery, the condition kept', async () => {
    // A reply URL nobody listens on: an accepted event gets a delivery, a filtered one none.
    const channel = await ordersChannel({ reply_delivery: { url: 'http://127.0.0.1:9/replies' } });
    const res = await driver.sendEvent(channel.webhook_url, {
      type: 'order.created',
      total: 5,
      id: 1,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'filtered', event_id: expect.any(String) });
    const accepted = await driver.sendEvent(channel.webhook_url, {
      type: 'order.created',
      total: 50,
      id: 2,
    });
    expect(accepted.body.status).toBe('received');
    expect(await chatsUsed()).toBe(1);

    await createWorker(app.ctx).runOnce();
    expect(ai.prompts()).toEqual(['Order 2']);
    const event = (await driver.api('get', `/events/${res.body.event_id as string}`).expect(200))
      .body;
    expect(event).toMatchObject({
      status: 'filtered',
      reply: null,
      prompt: null,
      attempts: 0,
      delivery: null,
      error: 'payload.total gte 10',
      redactions: null,
    });
    expect(event.completed_at).not.toBeNull();
    const answered = (await driver.api('get', `/events/${accepted.body.event_id as string}`)).body;
    expect(answered.delivery).not.toBeNull();
    const listed = await driver.api('get', `/events?status=filtered`).expect(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([res.body.event_id]);
  });

  it('is answered at once when the sender waits, and even when the quota is used up', async () => {
    const channel = await ordersChannel();
    await driver.setWorkspace({ chat_quota: 0 }).expect(200);
    const started = Date.now();
    const res = await driver.sendEvent(`${channel.webhook_url}?wait=10`, { type: 'refund' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('filtered');
    expect(Date.now() - started).toBeLessThan(5_000);
    const refused = await driver.sendEvent(channel.webhook_url, {
      type: 'order.created',
      total: 20,
    });
    expect(refused.status).toBe(403);
  });

  it('keeps only the first 64 KB of its payload, like a refused request, and is then not replayed', async () => {
    const channel = await ordersChannel();
    // 900 KB; three bytes a character, so the 64 KB mark falls inside one, left out whole.
    const large = (fields: Record<string, unknown>) =>
      JSON.stringify({ ...fields, notes: '€'.repeat(300_000) });
    const body = large({ type: 'refund' });
    const res = await driver.sendEvent(channel.webhook_url, body);
    expect(res.body.status).toBe('filtered');
    const id = res.body.event_id as string;
    const event = (await driver.api('get', `/events/${id}`).expect(200)).body;
    expect(event).toMatchObject({
      status: 'filtered',
      payload_truncated: true,
      error: 'payload.type eq "order.created"',
    });
    expect(Buffer.byteLength(event.payload)).toBe(65_534);
    expect(body.startsWith(event.payload)).toBe(true);

    // Accepted, the same size is kept whole; a small filtered payload too.
    const accepted = large({ type: 'order.created', total: 50 });
    const kept = await driver.sendEvent(channel.webhook_url, accepted);
    expect(kept.body.status).toBe('received');
    const acceptedEvent = await driver.api('get', `/events/${kept.body.event_id as string}`);
    expect(acceptedEvent.body).toMatchObject({ payload: accepted, payload_truncated: false });
    const small = await driver.sendEvent(channel.webhook_url, { type: 'refund' });
    const smallEvent = await driver.api('get', `/events/${small.body.event_id as string}`);
    expect(smallEvent.body).toMatchObject({
      payload: '{"type":"refund"}',
      payload_truncated: false,
    });

    const admin = new PanelClient(app);
    await admin.signIn();
    const shown = await admin.page(`/logs/${id}`).expect(200);
    expect(shown.text).toContain('its first 64 KB: the rest of this filtered body was not kept');

    // What is kept is no whole payload: there is nothing to render again.
    const replay = await driver.api('post', `/events/${id}/replay`);
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('event_not_replayable');
    const replayable = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, status: 'filtered', dry_run: true })
      .expect(200);
    expect(replayable.body).toEqual({ count: 1 });
  });

  it('holds its dedup key: a repeat is its duplicate, never stored or asked', async () => {
    const channel = await ordersChannel();
    const headers = { 'Idempotency-Key': 'k-1' };
    const first = await driver.sendEvent(channel.webhook_url, { type: 'refund' }, { headers });
    const again = await driver.sendEvent(channel.webhook_url, { type: 'refund' }, { headers });
    expect(first.body.status).toBe('filtered');
    expect(again.body).toEqual({
      status: 'filtered',
      event_id: first.body.event_id,
      duplicate: true,
    });
    const other = await driver.sendEvent(
      channel.webhook_url,
      { type: 'order.created', total: 99 },
      { headers },
    );
    expect(other.status).toBe(422);
    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => e.status)).toEqual(['filtered', 'rejected']);
    const stored = await driver.api('get', `/events/${first.body.event_id as string}`).expect(200);
    expect(stored.body.duplicates).toBe(1);
    expect(await chatsUsed()).toBe(0);
  });

  it('is filtered within one batch too: concurrent repeats share the first verdict', async () => {
    const channel = await ordersChannel({ dedup: { mode: 'payload', field: 'id' } });
    const sends = Array.from({ length: 8 }, () =>
      driver.sendEvent(channel.webhook_url, { type: 'refund', id: 'same' }),
    );
    const answers = await Promise.all(sends);
    expect(new Set(answers.map((a) => a.body.event_id)).size).toBe(1);
    expect(answers.every((a) => a.body.status === 'filtered')).toBe(true);
    expect((await driver.eventsOf(channel.id)).map((e) => e.status)).toEqual(['filtered']);
  });
});

describe('accept_when reads the payload as it was written', () => {
  /** The status each raw body is answered with, on a channel with `conditions`. */
  async function statuses(conditions: unknown[], bodies: string[]): Promise<string[]> {
    const channel = await ordersChannel({ accept_when: conditions });
    const answers: string[] = [];
    for (const body of bodies) {
      const res = await driver.sendEvent(channel.webhook_url, body);
      answers.push(res.status === 200 ? (res.body.status as string) : String(res.status));
    }
    return answers;
  }

  it('compares numbers as their text: big integers and 1.0 are not rounded', async () => {
    const conditions = [
      { path: 'payload.id', op: 'eq', value: '9007199254740993' },
      { path: 'payload.qty', op: 'ne', value: '1' },
      { path: 'payload.qty', op: 'in', value: ['1.0', '1.00'] },
      { path: 'payload.qty', op: 'gte', value: 1 },
    ];
    expect(
      await statuses(conditions, [
        '{"id": 9007199254740993, "qty": 1.0}',
        // JSON.parse reads both as 9007199254740992 and 1: as text they differ.
        '{"id": 9007199254740992, "qty": 1.0}',
        '{"id": 9007199254740993, "qty": 1}',
        '{"id": 9007199254740993, "qty": 1.00}',
      ]),
    ).toEqual(['received', 'filtered', 'filtered', 'received']);
  });

  it('reads an object as its compact JSON: numbers as written, keys in their order', async () => {
    const conditions = [
      { path: 'payload.order', op: 'eq', value: '{"b":1.50,"2":[1e3,-0],"s":"a b"}' },
      { path: 'payload.order.2', op: 'contains', value: '1e3' },
    ];
    expect(
      await statuses(conditions, [
        '{"order":{"b":1.50,"2":[1e3,-0],"s":"a b"}}',
        '{ "order" : {\n  "b" : 1.50 ,\n  "2" : [ 1e3 , -0 ],\n  "s" : "a b"\n } }',
        // The keys in the order a JavaScript object would list them.
        '{"order":{"2":[1e3,-0],"b":1.50,"s":"a b"}}',
        '{"order":{"b":1.5,"2":[1000,0],"s":"a b"}}',
      ]),
    ).toEqual(['received', 'received', 'filtered', 'filtered']);
  });

  it('decodes escapes in keys and strings, and writes an object’s strings as JSON does', async () => {
    const conditions = [
      { path: 'payload.type', op: 'eq', value: 'order.créé' },
      { path: 'payload.note', op: 'eq', value: '{"text":"a/b \\"c\\"","é":"\\u0000"}' },
    ];
    expect(
      await statuses(conditions, [
        '{"type":"order.cr\\u00e9\\u00E9","note":{"text":"a\\/b \\"c\\"","\\u00e9":"\\u0000"}}',
        '{"t\\u0079pe":"order.créé","note":{"text":"a/b \\u0022c\\u0022","é":"\\u0000"}}',
        '{"type":"order.cr\\u00e9e","note":{"text":"a/b \\"c\\"","é":"\\u0000"}}',
      ]),
    ).toEqual(['received', 'received', 'filtered']);
  });

  it('takes the last of repeated keys, at every level and inside objects read whole', async () => {
    const conditions = [
      { path: 'payload.type', op: 'eq', value: 'order.created' },
      { path: 'payload.order.total', op: 'gte', value: 10 },
      { path: 'payload.order.lines', op: 'eq', value: '{"a":2,"b":3}' },
    ];
    expect(
      await statuses(conditions, [
        '{"type":"refund","order":{"total":50,"lines":{"a":1,"b":3,"a":2}},"type":"order.created"}',
        '{"type":"order.created","order":{"total":50,"lines":{"a":2,"b":3}},"type":"refund"}',
        '{"type":"order.created","order":{"total":50,"lines":{"a":2,"b":3}},"order":{"total":5}}',
        '{"type":"order.created","order":{"total":50,"lines":{"a":2,"b":3,"a":1}}}',
      ]),
    ).toEqual(['received', 'filtered', 'filtered', 'filtered']);
  });

  it('refuses what a plain channel refuses, and takes a leading byte-order mark', async () => {
    const deep = `{"a":${'['.repeat(1000)}${']'.repeat(1000)}}`;
    const channel = await ordersChannel({ accept_when: [{ path: 'payload.a', op: 'exists' }] });
    const plain = await driver.createChannel();
    for (const body of [deep, '{"a":1,}']) {
      const filtered = await driver.sendEvent(channel.webhook_url, body);
      const refused = await driver.sendEvent(plain.webhook_url, body);
      expect(filtered.status).toBe(400);
      expect(filtered.body).toMatchObject({ code: 'invalid_json', detail: refused.body.detail });
    }
    const marked = await driver.sendEvent(channel.webhook_url, '\ufeff{"a":true}');
    expect(marked.body.status).toBe('received');
  });
});
