import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFakeChats, useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const chats = useFakeChats();
const { app, driver, ai } = useTestApp({
  ai: true,
  env: () => ({ ...ADMIN_ENV, ...chats.env }),
});
const client = useSignedInAdmin(app);

/** The page's element that starts with `open` (its tag's name read from it), to its end. */
function element(html: string, open: string): string {
  const start = html.indexOf(open);
  if (start < 0) return '';
  const tag = /^<(\w+)/.exec(open)?.[1] ?? 'div';
  return html.slice(start, html.indexOf(`</${tag}>`, start) + tag.length + 3);
}

/** The summary strip's members, label → value, in the order shown. */
function summaryOf(html: string): [string, string][] {
  const strip = element(html, '<dl class="event-summary"');
  return [...strip.matchAll(/<dt>([^<]+)<\/dt><dd[^>]*>([\s\S]*?)<\/dd>/g)].map((m) => [
    m[1] as string,
    unescapeHtml((m[2] as string).replace(/<[^>]+>/g, '')).trim(),
  ]);
}

describe("the event page's summary first", () => {
  it('says status, channel, provider, model, tokens, cost and latency once, under the title', async () => {
    const channel = await driver.createChannel({ name: 'Orders', template: 'Order {{id}}' });
    const sent = await driver.sendEvent(channel.webhook_url, { id: 7 });
    await createWorker(app.ctx).runOnce();
    const html = (await client.page(`/logs/${sent.body.event_id}`)).text;

    const summary = summaryOf(html);
    expect(summary.map(([label]) => label)).toEqual([
      'Status',
      'Channel',
      'Provider',
      'Model',
      'Tokens',
      'Cost',
      'Latency',
      'Received',
    ]);
    expect(Object.fromEntries(summary)).toMatchObject({
      Status: 'Replied',
      Channel: 'Orders',
      Provider: 'default',
    });
    expect(Object.fromEntries(summary).Latency).toMatch(/^\d+ ms$/);
    // The strip is under the title, before the outcome; the facts below say none of it again.
    expect(html.indexOf('class="event-summary"')).toBeLessThan(html.indexOf('id="outcome"'));
    const facts = element(html, '<dl class="facts">');
    for (const label of ['Provider', 'Model', 'Tokens', 'Cost', 'Latency', 'Status'])
      expect(facts).not.toContain(`<dt>${label}</dt>`);
    expect(html).not.toMatch(/Model <code>|Provider <code>|Tokens: /);
  });

  it("says how many of the prompt's tokens were read from and written to the prompt cache", async () => {
    const channel = await driver.createChannel({ name: 'Cached', template: 'Order {{id}}' });
    ai.enqueue({
      body: {
        ...chatCompletion('Confirmed.'),
        usage: {
          prompt_tokens: 1200,
          completion_tokens: 30,
          total_tokens: 1230,
          prompt_tokens_details: { cached_tokens: 1024 },
        },
      },
    });
    const sent = await driver.sendEvent(channel.webhook_url, { id: 8 });
    await createWorker(app.ctx).runOnce();
    const html = (await client.page(`/logs/${sent.body.event_id}`)).text;
    expect(Object.fromEntries(summaryOf(html)).Tokens).toBe(
      '1200 prompt + 30 reply = 1230 (prompt cache: 1024 read, 0 written)',
    );
  });

  it('opens the request headers of a refused request, and makes its Replay secondary, saying it skips the sender checks', async () => {
    const channel = await driver.createChannel({
      name: 'Signed',
      verification: { scheme: 'github', secret: 'a-github-secret-of-length' },
    });
    const refused = await driver.sendEvent(channel.webhook_url, { id: 1 });
    expect(refused.status).toBe(401);
    const { body } = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
    const id = body.data[0].id as string;

    const html = (await client.page(`/logs/${id}`)).text;
    expect(html).toMatch(
      /<details class="card input-block event-headers" id="headers-block" open>/,
    );
    const replay =
      /<button type="submit" class="([^"]+)" id="replay-event"[^>]*>([^<]+)<\/button>/.exec(html);
    expect(replay?.[1]).toBe('button');
    expect(replay?.[2]).toBe('Replay, skipping the sender checks');
    expect(unescapeHtml(html)).toContain(
      'Refused by the sender checks (signature invalid): a replay sends this unverified request to the AI.',
    );
    expect(unescapeHtml(html)).toMatch(
      /data-confirm="Send this refused request to the AI anyway\?/,
    );

    // An event that was let in keeps Replay as the page's main action, its headers folded.
    const open = await driver.createChannel({ name: 'Open' });
    const accepted = await driver.sendEvent(open.webhook_url, { id: 2 });
    await createWorker(app.ctx).runOnce();
    const plain = (await client.page(`/logs/${accepted.body.event_id}`)).text;
    expect(plain).toContain(
      '<button type="submit" class="button primary" id="replay-event">Replay</button>',
    );
    expect(plain).toContain('<details class="card input-block event-headers" id="headers-block">');
  });

  it('shows a destination skipped on purpose in grey, not as a red error', async () => {
    const channel = await driver.createChannel({
      name: 'Only failures',
      destinations: [
        {
          kind: 'telegram',
          bot_token: '7:SKIP',
          chat_id: '5',
          when: [{ path: 'status', op: 'eq', value: 'failed' }],
        },
      ],
    });
    const sent = await driver.sendEvent(channel.webhook_url, { id: 3 });
    const id = sent.body.event_id as string;
    await createWorker(app.ctx).runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = (await driver.api('get', `/events/${id}`)).body;
      return event.deliveries[0]?.status === 'skipped';
    });
    expect(chats.of('telegram')).toEqual([]);

    const html = (await client.page(`/logs/${id}`)).text;
    const row = element(html, '<tr data-destination-id=');
    expect(row).toContain('class="delivery-skipped"');
    expect(row).toContain('badge-delivery-skipped');
    expect(row).not.toContain('text-error');
    expect(row).toMatch(/<td class="muted">[^<]+<\/td>/);
  });

  it("shows the thread as the conversation the model is sent: earlier prompts and replies, oldest first, then this event's", async () => {
    const channel = await driver.createChannel({
      name: 'Support',
      template: 'Customer says {{text}}',
      ai: { thread_key: '{{customer}}', history: 2 },
    });
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three', 'four']) {
      const res = await driver.sendEvent(channel.webhook_url, { customer: 'ada', text });
      ids.push(res.body.event_id as string);
    }
    await driver.sendEvent(channel.webhook_url, { customer: 'bo', text: 'other thread' });
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);

    const html = (await client.page(`/logs/${ids[3]}`)).text;
    const conversation = element(html, '<ol class="conversation"');
    const turns = [
      ...conversation.matchAll(
        /<li class="turn( current)?" data-event-id="(\d+)">([\s\S]*?)<\/li>/g,
      ),
    ];
    // History 2: the two replied events before this one, then this event itself.
    expect(turns.map((m) => m[2])).toEqual([ids[1], ids[2], ids[3]]);
    expect(turns.map((m) => Boolean(m[1]))).toEqual([false, false, true]);
    const messages = (turn: string) =>
      [
        ...turn.matchAll(
          /<span class="message-role">(\w+)<\/span><pre tabindex="0">([^<]*)<\/pre>/g,
        ),
      ].map((m) => `${m[1]}: ${unescapeHtml(m[2] as string)}`);
    const replyOf = async (id: string | undefined) =>
      (await driver.api('get', `/events/${id}`).expect(200)).body.reply as string;
    expect(messages(turns[0]?.[3] ?? '')).toEqual([
      'Prompt: Customer says two',
      `Reply: ${await replyOf(ids[1])}`,
    ]);
    expect(messages(turns[2]?.[3] ?? '')).toEqual([
      'Prompt: Customer says four',
      `Reply: ${await replyOf(ids[3])}`,
    ]);
    expect(unescapeHtml(conversation)).not.toMatch(/one|other thread/);
  });
});
