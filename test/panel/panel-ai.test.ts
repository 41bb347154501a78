import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, AI_MODEL: 'stand-in-model' } });
const client = useSignedInAdmin(app);

const SCHEMA = '{"type": "object", "required": ["summary"]}';

function aiFields(overrides: Record<string, string> = {}) {
  return {
    name: 'Support',
    template: 'Customer {{customer.name}} says {{text}}',
    ai_model: 'gpt-support',
    ai_system_prompt: 'You answer for {{shop}} about {{customer.tier}}.',
    ai_temperature: '0.4',
    ai_max_tokens: '500',
    ai_response_format: 'text',
    ai_json_schema: '',
    ai_thread_key: '{{customer.id}}',
    ai_history: '3',
    ai_prompt_cache: '1h',
    ai_reply_cache_s: '3600',
    ...overrides,
  };
}

describe('channel editor: AI section', () => {
  it('saves every AI setting and shows them again', async () => {
    const id = await client.createChannel('Support', 'x');
    const saved = await client.form(`/channels/${id}`, aiFields());
    expect(saved.status).toBe(303);
    const channel = (await driver.api('get', `/channels/${id}`)).body;
    expect(channel.ai).toEqual({
      provider: 'default',
      fallbacks: [],
      model: 'gpt-support',
      system_prompt: 'You answer for {{shop}} about {{customer.tier}}.',
      temperature: 0.4,
      max_tokens: 500,
      response_format: 'text',
      thread_key: '{{customer.id}}',
      history: 3,
      tools: [],
      max_tool_rounds: 4,
      prompt_cache: '1h',
      images: [],
      reply_cache_s: 3600,
      redact: null,
      restore: null,
      spotlight: null,
    });
    const html = (await client.page(`/channels/${id}`)).text;
    expect(html).toContain('id="ai_model" name="ai_model" value="gpt-support"');
    expect(html).toContain('<option value="1h" selected>On, 1 hour</option>');
    expect(html).toContain('id="ai_reply_cache_s" name="ai_reply_cache_s" value="3600"');
    expect(html).toContain('<option value="text" selected>');

    const cleared = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_model: '',
      ai_temperature: '',
      ai_response_format: '',
      ai_thread_key: '',
      ai_history: '',
      ai_reply_cache_s: '',
    });
    expect(cleared.status).toBe(303);
    expect((await driver.api('get', `/channels/${id}`)).body.ai).toMatchObject({
      model: null,
      temperature: null,
      response_format: null,
      thread_key: null,
      history: null,
      reply_cache_s: 0,
    });
  });

  it('validates on save: numbers, ranges and a schema that must compile', async () => {
    const id = await client.createChannel('Checked', 'x');
    const bad = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_temperature: 'warm',
      ai_history: '99',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/id="ai_temperature-error">must be a number</);

    const range = await client.form(`/channels/${id}`, { ...aiFields(), ai_history: '99' });
    expect(range.status).toBe(400);
    expect(range.text).toMatch(/id="ai_history-error">[^<]*50/);

    const longCache = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_reply_cache_s: '2592001',
    });
    expect(longCache.status).toBe(400);
    expect(longCache.text).toMatch(/id="ai_reply_cache_s-error">[^<]*2592000/);

    const notJson = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_response_format: 'json_schema',
      ai_json_schema: '{"type": ',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.text).toMatch(/id="ai_json_schema-error">The schema is not JSON/);

    const invalid = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_response_format: 'json_schema',
      ai_json_schema: '{"type": "objekt"}',
    });
    expect(invalid.status).toBe(400);
    expect(unescapeHtml(invalid.text)).toMatch(
      /id="ai_json_schema-error">is not a usable JSON Schema: /,
    );

    const good = await client.form(`/channels/${id}`, {
      ...aiFields(),
      ai_response_format: 'json_schema',
      ai_json_schema: SCHEMA,
    });
    expect(good.status).toBe(303);
    expect((await driver.api('get', `/channels/${id}`)).body.ai.response_format).toEqual({
      json_schema: { type: 'object', required: ['summary'] },
    });
  });

  it('previews the system prompt and the thread key with the sample', async () => {
    const id = await client.createChannel('Previewed', 'x');
    const res = await client.form(`/channels/${id}/preview`, {
      ...aiFields(),
      sample: '{"shop": "Acme", "customer": {"id": 7, "name": "Ada"}, "text": "hi"}',
    });
    expect(res.status).toBe(200);
    const html = unescapeHtml(res.text);
    expect(html).toContain('You answer for Acme about .');
    expect(html).toMatch(/id="system-missing">[\s\S]*\{\{customer\.tier\}\}/);
    expect(html).toMatch(/Thread key:<\/strong> <code>7<\/code>/);
  });
});

describe('Brain Logs and the channel list: what the AI call used', () => {
  it('shows model, tokens, latency, the thread link and missing fields; filters by thread', async () => {
    const id = await client.createChannel('Threads', 'x');
    await client.form(`/channels/${id}`, aiFields());
    const url = await client.webhookUrl(id);
    const first = await driver.sendEvent(url, { customer: { id: 7, name: 'Ada' }, text: 'one' });
    await driver.sendEvent(url, { customer: { id: 8, name: 'Bo' }, text: 'two' });
    const worker = createWorker(app.ctx);
    await worker.runOnce();

    const eventId = first.body.event_id as string;
    const raw = (await client.page(`/logs/${eventId}`)).text;
    expect(raw).toContain(`href="/logs?channel=${id}&amp;thread=7"`);
    const html = unescapeHtml(raw);
    expect(html).toContain('<dt>Model</dt><dd class="event-model"><code>gpt-support</code>');
    expect(html).toMatch(/<dt>Latency<\/dt><dd class="event-latency">\d+ ms/);
    expect(html).toContain('Missing fields');
    expect(html).toMatch(/Not in the payload[\s\S]*\{\{shop\}\}/);

    const thread = (await client.page(`/logs?channel=${id}&thread=7`)).text;
    const listed = [...thread.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)].map(
      (m) => m[1],
    );
    expect(listed).toEqual([eventId]);

    const list = (await client.page('/channels')).text;
    const row = list.slice(list.indexOf(`href="/channels/${id}"`));
    expect(row).toMatch(
      /data-label="With missing fields today"><span class="badge badge-warn"[^>]*>2</,
    );
  });
});

describe('The event page: its thread', () => {
  /** The thread section's events, top to bottom, with the one marked as this page's. */
  const threadOf = (html: string) => {
    const section = /<section class="card" id="thread"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
    const items = [
      ...section.matchAll(
        /<li class="thread-event( current)?" data-event-id="(\d+)">([\s\S]*?)<\/li>/g,
      ),
    ];
    return {
      section,
      ids: items.map((m) => m[2]),
      current: items.filter((m) => m[1]).map((m) => m[2]),
      items: items.map((m) => ({ id: m[2], html: unescapeHtml(m[3] ?? '') })),
    };
  };

  it('lists the events of the same channel and thread key nearest the event, newest first', async () => {
    const support = await driver.createChannel({
      name: 'Thread page',
      template: 'Hi {{text}}',
      ai: { thread_key: '{{customer}}' },
    });
    const elsewhere = await driver.createChannel({
      name: 'Same key, other channel',
      template: 'Hi {{text}}',
      ai: { thread_key: '{{customer}}' },
    });
    const ada: string[] = [];
    for (let n = 1; n <= 13; n++) {
      const res = await driver.sendEvent(support.webhook_url, {
        customer: 'ada',
        text: `ada ${n}`,
      });
      ada.push(res.body.event_id as string);
      if (n === 2) {
        // Interleaved: other threads, and the same key on another channel, are not this thread.
        await driver.sendEvent(support.webhook_url, { customer: 'bo', text: 'bo 1' });
        await driver.sendEvent(elsewhere.webhook_url, { customer: 'ada', text: 'elsewhere' });
      }
    }
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);

    // The second event: ten newer ones (of twelve), itself, and the one before it.
    const second = ada[1] as string;
    const res = await client.page(`/logs/${second}`);
    expect(res.status).toBe(200);
    const thread = threadOf(res.text);
    expect(thread.ids).toEqual([...ada.slice(2, 12).reverse(), second, ada[0]]);
    expect(thread.current).toEqual([second]);
    expect(thread.section).toContain(`<a href="/logs/${second}" aria-current="page">`);
    expect(thread.section).toContain(`<a href="/logs/${ada[0]}">#${ada[0]}</a>`);
    expect(thread.section).toContain(
      `href="/logs?channel=${support.id}&amp;thread=ada">All its events in Brain Logs`,
    );
    expect(thread.section).toContain('Newer events of this thread are in Brain Logs.');
    expect(thread.section).not.toContain('Older events of this thread');
    const first = thread.items.find((item) => item.id === ada[0])?.html ?? '';
    expect(first).toContain('Replied');
    expect(first).toMatch(/<time datetime="[^"]+Z">/);
    expect(first).toMatch(/class="thread-preview">[^<]*You wrote: Hi ada 1</);
    expect(unescapeHtml(thread.section)).not.toMatch(/bo 1|elsewhere/);

    // The newest: nothing newer, the ten before it, more older ones beyond.
    const newest = threadOf((await client.page(`/logs/${ada[12]}`)).text);
    expect(newest.ids).toEqual(ada.slice(2).reverse());
    expect(newest.section).not.toContain('Newer events of this thread');
    expect(newest.section).toContain('Older events of this thread are in Brain Logs.');

    // An event in no thread has no thread section.
    const plain = await driver.createChannel({ name: 'No threads', template: 'Hi {{text}}' });
    const lone = await driver.sendEvent(plain.webhook_url, { text: 'alone' });
    const page = (await client.page(`/logs/${lone.body.event_id}`)).text;
    expect(page).not.toContain('id="thread"');
  });
});

describe('Workspace page: AI usage', () => {
  it('shows tokens and events of the last 30 days, as a table the chart script draws', async () => {
    const html = (await client.page('/workspace')).text;
    expect(html).toContain('AI usage, last 30 days');
    const today = new Date().toISOString().slice(0, 10);
    expect(html).toMatch(
      new RegExp(`<tr data-day="${today}" data-events="\\d+" data-tokens="0" data-cost="[0-9.]+">`),
    );
    expect(html.match(/<tr data-day="/g)).toHaveLength(30);
    expect(html).toContain('<script src="/vendor/chart.umd.js" defer></script>');
    expect(html).toContain('<script src="/static/workspace-usage.js" defer></script>');
    const chart = await client.page('/vendor/chart.umd.js');
    expect(chart.status).toBe(200);
    expect(chart.headers['content-type']).toMatch(/^text\/javascript/);
    expect((await client.page('/static/workspace-usage.js')).status).toBe(200);
  });
});
