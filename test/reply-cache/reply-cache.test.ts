import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { metricValue } from '../support/metric-value.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { pngImage } from '../support/image-files.js';
import { ToolEndpoint } from '../support/tool-servers.js';

const endpoint = useFixture(() => ToolEndpoint.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, TOOLS_ALLOW_PRIVATE: 'true', WORKER_RETRY_BASE_MS: '0' },
});

interface StoredEvent {
  id: string;
  status: string;
  prompt: string | null;
  reply: string | null;
  attempts: number;
  completed_at: string | null;
  provider: string | null;
  model: string | null;
  usage: unknown;
  calls: unknown[];
  tool_calls: unknown[];
  cost_usd: number | null;
  redactions: Record<string, number> | null;
  cached_from: string | null;
}

let panel: PanelClient;
beforeAll(async () => {
  panel = new PanelClient(app);
  await panel.signIn();
  // A price for the fake model, so the replies served from the cache have a known cost.
  await driver
    .api('put', '/prices/fake-model')
    .send({ input_per_mtok: 3, output_per_mtok: 15 })
    .expect(200);
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('update channels set deleted_at = now() where deleted_at is null');
  await app.ctx.db.query('delete from tools');
});

async function channelWith(ai: Record<string, unknown>): Promise<ChannelJson> {
  return driver.createChannel({ name: 'Alerts', template: 'Alert: {{text}}', ai });
}

/** Sends the payload and lets the worker answer it: the event as the API shows it then. */
async function answered(channel: ChannelJson, payload: unknown = { text: 'disk full on db-1' }) {
  const res = await driver.sendEvent(channel.webhook_url, payload);
  expect(res.status).toBe(200);
  const id = res.body.event_id as string;
  await createWorker(app.ctx).runOnce();
  return (await driver.api('get', `/events/${id}`).expect(200)).body as StoredEvent;
}

/** `hookprompt_reply_cache_total` of an outcome, as /metrics shows it now. */
async function cacheCounted(outcome: 'hit' | 'miss'): Promise<number> {
  return metricValue(app.baseUrl, `hookprompt_reply_cache_total{outcome="${outcome}"}`);
}

describe('the reply cache (ai.reply_cache_s)', () => {
  it('is off by default, and refuses a window past 30 days', async () => {
    const channel = await channelWith({});
    expect((channel as ChannelJson & { ai: { reply_cache_s: number } }).ai.reply_cache_s).toBe(0);
    const [hits, misses] = [await cacheCounted('hit'), await cacheCounted('miss')];
    await answered(channel);
    const second = await answered(channel);
    expect(ai.requests).toHaveLength(2);
    expect(second.cached_from).toBeNull();
    expect([await cacheCounted('hit'), await cacheCounted('miss')]).toEqual([hits, misses]);

    const res = await driver.updateChannel(channel.id, { ai: { reply_cache_s: 2_592_001 } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('reply_cache_s');
    await driver.updateChannel(channel.id, { ai: { reply_cache_s: 2_592_000 } }).expect(200);
  });

  it('replies to the same request within the window without a call, as the contract lists', async () => {
    const channel = await channelWith({ reply_cache_s: 600, temperature: 0.2 });
    const [hits, misses] = [await cacheCounted('hit'), await cacheCounted('miss')];
    const first = await answered(channel);
    expect(first).toMatchObject({ status: 'replied', attempts: 1, cached_from: null });
    expect(first.cost_usd).toBeGreaterThan(0);
    expect(ai.requests).toHaveLength(1);

    const second = await answered(channel);
    expect(ai.requests).toHaveLength(1);
    expect(second).toMatchObject({
      status: 'replied',
      reply: first.reply,
      prompt: first.prompt,
      cached_from: first.id,
      calls: [],
      tool_calls: [],
      usage: null,
      cost_usd: 0,
      provider: first.provider,
      model: first.model,
      attempts: 0,
    });
    expect(second.completed_at).not.toBeNull();
    expect(await cacheCounted('hit')).toBe(hits + 1);
    expect(await cacheCounted('miss')).toBe(misses + 1);

    // A reply served from the cache starts no window of its own: the third is served from the first.
    const third = await answered(channel);
    expect(third.cached_from).toBe(first.id);
    expect(ai.requests).toHaveLength(1);

    // Brain Logs links the event served from; the Workspace page counts what the cache saved.
    const page = (await panel.page(`/logs/${second.id}`).expect(200)).text;
    expect(page).toContain(
      `Served from cache of <a href="/logs/${first.id}">event #${first.id}</a>`,
    );
    const workspace = (await panel.page('/workspace').expect(200)).text;
    expect(workspace).toMatch(/id="reply-cache-hits">2</);
    expect(workspace).toContain(`data-usd="${2 * (first.cost_usd ?? 0)}"`);
  });

  it('asks the model again once the window has passed since the cached reply', async () => {
    const channel = await channelWith({ reply_cache_s: 60 });
    const first = await answered(channel);
    // The window counts from the cached event's completed_at: put it 61 seconds back.
    await app.ctx.db.query(
      `update events set completed_at = completed_at - interval '61 seconds' where id = $1`,
      [first.id],
    );
    const misses = await cacheCounted('miss');
    const second = await answered(channel);
    expect(ai.requests).toHaveLength(2);
    expect(second).toMatchObject({ cached_from: null, attempts: 1 });
    expect(await cacheCounted('miss')).toBe(misses + 1);
    // The new reply is cached in its turn.
    expect((await answered(channel)).cached_from).toBe(second.id);
  });

  it('asks again when the prompt, the model or the temperature differs', async () => {
    const channel = await channelWith({ reply_cache_s: 600, temperature: 0.2 });
    await answered(channel, { text: 'disk full on db-1' });
    expect((await answered(channel, { text: 'disk full on db-2' })).cached_from).toBeNull();
    expect(ai.requests).toHaveLength(2);

    await driver.updateChannel(channel.id, { ai: { temperature: 0.7 } }).expect(200);
    expect((await answered(channel)).cached_from).toBeNull();
    await driver.updateChannel(channel.id, { ai: { model: 'fake-model-2' } }).expect(200);
    expect((await answered(channel)).cached_from).toBeNull();
    expect(ai.requests).toHaveLength(4);
    expect(ai.requests.map((r) => (r.body as { temperature?: number }).temperature)).toEqual([
      0.2, 0.2, 0.7, 0.7,
    ]);
    // Each setting's own reply is cached: asking as before is served again.
    expect((await answered(channel)).cached_from).not.toBeNull();
    expect(ai.requests).toHaveLength(4);
  });

  it('compares the images sent: another picture asks again, the same one is served', async () => {
    const channel = await channelWith({ reply_cache_s: 600, images: ['payload.shot'] });
    const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;
    const [first, other] = [dataUrl(pngImage(2, 2)), dataUrl(pngImage(3, 3))];
    const asked = await answered(channel, { text: 'what is broken?', shot: first });
    expect(asked).toMatchObject({ status: 'replied', cached_from: null });
    // the same text with another picture is another request
    expect(await answered(channel, { text: 'what is broken?', shot: other })).toMatchObject({
      status: 'replied',
      cached_from: null,
    });
    expect(ai.requests).toHaveLength(2);
    const again = await answered(channel, { text: 'what is broken?', shot: first });
    expect(again).toMatchObject({ status: 'replied', cached_from: asked.id, attempts: 0 });
    expect(again.reply).toBe(asked.reply);
    expect(ai.requests).toHaveLength(2);
  });

  it('never caches a reply whose rounds called a tool', async () => {
    const res = await driver.api('post', '/tools').send({
      name: 'lookup',
      kind: 'http',
      description: 'The status of a host',
      url: `${endpoint.baseUrl}/orders?order={{input.order}}`,
      input_schema: { type: 'object', properties: { order: { type: 'string' } } },
    });
    expect(res.status, res.text).toBe(201);
    const channel = await channelWith({ reply_cache_s: 600, tools: ['lookup'] });
    const asksForLookup = () => {
      const answer = chatCompletion(null);
      (answer.choices[0]?.message as Record<string, unknown>).tool_calls = [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'lookup', arguments: '{"order":"A1"}' },
        },
      ];
      return { body: answer };
    };
    ai.enqueue(asksForLookup(), { body: chatCompletion('db-1 is full.') });
    const first = await answered(channel);
    expect(first.tool_calls).toHaveLength(1);
    expect(first.reply).toBe('db-1 is full.');

    ai.enqueue(asksForLookup(), { body: chatCompletion('db-1 is still full.') });
    const second = await answered(channel);
    expect(ai.requests).toHaveLength(4);
    expect(second).toMatchObject({ cached_from: null, reply: 'db-1 is still full.' });
    // Neither is served later: the first without a tool call is asked too, and is cached.
    const third = await answered(channel);
    expect(third.cached_from).toBeNull();
    expect(ai.requests).toHaveLength(5);
    expect((await answered(channel)).cached_from).toBe(third.id);
  });

  it('compares after redaction and restores the served reply with the new event values', async () => {
    const channel = await channelWith({ reply_cache_s: 600, redact: ['secret'], restore: true });
    const keyA = 'sk-live-AAAA1111AAAA2222AAAA3333';
    const keyB = 'sk-live-BBBB4444BBBB5555BBBB6666';
    const first = await answered(channel, { text: `leaked key ${keyA}` });
    expect(ai.requests[0]?.prompt).toBe('Alert: leaked key [SECRET_1]');
    expect(first.reply).toBe(`Fake model reply to: Alert: leaked key ${keyA}`);

    const second = await answered(channel, { text: `leaked key ${keyB}` });
    expect(ai.requests).toHaveLength(1);
    expect(second).toMatchObject({
      cached_from: first.id,
      prompt: 'Alert: leaked key [SECRET_1]',
      reply: `Fake model reply to: Alert: leaked key ${keyB}`,
      redactions: { secret: 1 },
    });
    expect(second.reply).not.toContain(keyA);
  });

  it('serves under the spotlight, whose tags are drawn anew for every event', async () => {
    const channel = await channelWith({ reply_cache_s: 600, spotlight: true });
    const first = await answered(channel);
    const second = await answered(channel);
    expect(ai.requests).toHaveLength(1);
    expect(second.cached_from).toBe(first.id);
    // Each event's prompt is its own, tags included.
    expect(second.prompt).not.toBe(first.prompt);
    expect(second.prompt).toMatch(
      /^Alert: <data-[a-z0-9]{16}>disk full on db-1<\/data-[a-z0-9]{16}>$/,
    );
  });
});
