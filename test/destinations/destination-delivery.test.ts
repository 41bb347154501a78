import request from 'supertest';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliveriesOfEvents } from '../../src/deliveries/event-deliveries.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFakeChats, useReplyReceiver, useTestApp } from '../support/harness.js';

const chats = useFakeChats();
const receiver = useReplyReceiver();
const { app, driver, ai } = useTestApp({
  ai: true,
  env: () => ({
    ...chats.env,
    ...ADMIN_ENV,
    DELIVERY_ALLOW_PRIVATE: 'true',
    DELIVERY_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '5ms').join(','),
    DELIVERY_TIMEOUT_MS: '5000',
  }),
});

beforeAll(() => {
  chats.slackTokens.add('xoxb-bot');
  chats.telegramTokens.add('111:BOT');
});
beforeEach(() => {
  // the model answers with the prompt itself: the template decides what the reply is
  ai.defaultReply = (req) => ({ body: chatCompletion(req.prompt ?? '') });
  chats.messages.length = 0;
  chats.failureRate = 0;
});

type Delivery = { destination_id: string; kind: string; status: string; attempts: number };
type EventBody = { id: string; status: string; deliveries: Delivery[] };

const eventOf = async (id: string) => (await driver.api('get', `/events/${id}`)).body as EventBody;

/** Runs the AI worker until every event of the channel is finished. */
async function answered(channel: ChannelJson): Promise<void> {
  await eventually(
    async () => {
      await app.ctx.worker?.runOnce();
      const events = await driver.eventsOf(channel.id);
      return events.every((event) => ['replied', 'skipped', 'failed'].includes(event.status));
    },
    { what: 'every event answered' },
  );
}

/**
 * Runs the delivery worker until every message of these events has ended, then reads the events'
 * pages. Each round reads the messages' states as the pages show them in one go (not one page
 * per event: for 30 events those reads took most of the test's time, too long on a busy machine).
 */
async function deliveredAll(eventIds: string[]): Promise<EventBody[]> {
  await eventually(
    async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const shown = await deliveriesOfEvents(app.ctx.db, eventIds);
      const open = [...shown.values()].some((event) =>
        event.deliveries.some((d) => d.status === 'pending' || d.status === 'held'),
      );
      return !open;
    },
    { what: 'every message ended' },
  );
  return Promise.all(eventIds.map(eventOf));
}

async function send(channel: ChannelJson, body: unknown): Promise<string> {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

describe('messages to destinations', () => {
  it('each kind gets the message it should, routed by the JSON reply', async () => {
    const channel = await driver.createChannel({
      template: '{"severity": "{{severity}}", "text": "{{message.text}}"}',
      destinations: [
        {
          kind: 'telegram',
          bot_token: '111:BOT',
          chat_id: '{{message.chat.id}}',
          reply_to: '{{message.message_id}}',
          message: '{{json.text}}',
        },
        {
          kind: 'slack',
          token: 'xoxb-bot',
          channel: 'C-alerts',
          thread_ts: '{{ts}}',
          when: [{ path: 'json.severity', op: 'eq', value: 'high' }],
          message: 'Alert from {{event.channel_name}}: {{json.text}}',
        },
        {
          kind: 'discord',
          webhook_url: chats.webhookUrl('discord', 'd1'),
          message: '{{json.text}}',
        },
        { kind: 'teams', webhook_url: chats.webhookUrl('teams', 't1') },
        { kind: 'webhook', url: receiver.url('/dest'), message: '{{json.severity}}' },
      ],
    });
    const secret = (await driver.api('get', `/channels/${channel.id}/reply-secret`)).body.secret;
    receiver.secrets = [secret as string];
    // One after the other: two events of no thread may be delivered in either order.
    const high = await send(channel, {
      severity: 'high',
      ts: '1700.1',
      message: { text: 'disk full', chat: { id: 42 }, message_id: 7 },
    });
    await answered(channel);
    const [highEvent] = await deliveredAll([high]);
    const low = await send(channel, {
      severity: 'low',
      ts: '1700.2',
      message: { text: 'all good', chat: { id: 42 }, message_id: 8 },
    });
    await answered(channel);
    const [lowEvent] = await deliveredAll([low]);

    expect(chats.of('telegram').map((m) => m.body)).toEqual([
      {
        chat_id: 42,
        text: 'disk full',
        reply_parameters: { message_id: 7, allow_sending_without_reply: true },
      },
      {
        chat_id: 42,
        text: 'all good',
        reply_parameters: { message_id: 8, allow_sending_without_reply: true },
      },
    ]);
    expect(chats.of('slack').map((m) => m.body)).toEqual([
      { channel: 'C-alerts', text: 'Alert from Orders: disk full', thread_ts: '1700.1' },
    ]);
    expect(chats.of('discord').map((m) => m.text)).toEqual(['disk full', 'all good']);
    expect(chats.of('teams').map((m) => m.text)).toEqual([
      '{"severity": "high", "text": "disk full"}',
      '{"severity": "low", "text": "all good"}',
    ]);
    const hooks = receiver.messages.filter((m) => m.path === '/dest');
    expect(
      hooks.map((m) => [
        m.verifiedWith.length,
        m.json.type,
        (m.json as { message?: string }).message,
      ]),
    ).toEqual([
      [1, 'event.replied', 'high'],
      [1, 'event.replied', 'low'],
    ]);

    const kinds = (event: EventBody | undefined) =>
      Object.fromEntries((event?.deliveries ?? []).map((d) => [d.kind, [d.status, d.attempts]]));
    expect(kinds(highEvent)).toEqual({
      telegram: ['delivered', 1],
      slack: ['delivered', 1],
      discord: ['delivered', 1],
      teams: ['delivered', 1],
      webhook: ['delivered', 1],
    });
    expect(kinds(lowEvent).slack).toEqual(['skipped', 0]);

    const metrics = (await request(app.baseUrl).get('/metrics')).text;
    expect(metrics).toMatch(
      /hookprompt_deliveries_total\{kind="telegram",outcome="delivered"\} [1-9]/,
    );
    expect(metrics).toMatch(/hookprompt_delivery_duration_seconds_count\{kind="slack"\} [1-9]/);
    expect(app.logText()).not.toMatch(/111:BOT|xoxb-bot/);
  });

  it('a reply served from the reply cache reaches the reply URL and the destinations as any reply', async () => {
    const channel = await driver.createChannel({
      name: 'Cached',
      template: 'Alert: {{text}}',
      ai: { reply_cache_s: 600 },
      reply_delivery: { url: receiver.url('/cached') },
      destinations: [{ kind: 'teams', webhook_url: chats.webhookUrl('teams', 'cached') }],
    });
    const secret = (await driver.api('get', `/channels/${channel.id}/reply-secret`)).body.secret;
    receiver.secrets = [secret as string];
    const asked = await send(channel, { text: 'disk full on db-1' });
    await answered(channel);
    // The same request again, once the first reply is stored: served from it, no call.
    const served = await send(channel, { text: 'disk full on db-1' });
    await answered(channel);
    expect(ai.requests).toHaveLength(1);
    expect(await driver.api('get', `/events/${served}`).expect(200)).toMatchObject({
      body: { status: 'replied', cached_from: asked, attempts: 0 },
    });

    const events = await deliveredAll([asked, served]);
    expect(events.map((event) => event.deliveries.map((d) => [d.kind, d.status]))).toEqual([
      [['teams', 'delivered']],
      [['teams', 'delivered']],
    ]);
    expect(chats.of('teams').map((m) => m.text)).toEqual([
      'Alert: disk full on db-1',
      'Alert: disk full on db-1',
    ]);
    const replies = receiver.messages.filter((m) => m.path === '/cached');
    expect(
      replies.map((m) => {
        const data = m.json.data as { id: string; reply: string; cached_from: string | null };
        return [m.verifiedWith.length, m.json.type, data.id, data.cached_from, data.reply];
      }),
    ).toEqual([
      [1, 'event.replied', asked, null, 'Alert: disk full on db-1'],
      [1, 'event.replied', served, asked, 'Alert: disk full on db-1'],
    ]);
  });

  it('keeps each thread in event order while a tenth of the attempts fail, none twice', async () => {
    const channel = await driver.createChannel({
      template: '{{n}}',
      ai: { thread_key: '{{chat}}' },
      destinations: [{ kind: 'telegram', bot_token: '111:BOT', chat_id: '{{chat}}' }],
    });
    const ids: string[] = [];
    for (let n = 0; n < 30; n++) ids.push(await send(channel, { chat: `c${n % 3}`, n: String(n) }));
    await answered(channel);
    chats.failureRate = 0.1;
    const events = await deliveredAll(ids);
    expect(events.every((e) => e.deliveries[0]?.status === 'delivered')).toBe(true);
    // some were retried: the order held through retries
    expect(events.some((e) => (e.deliveries[0]?.attempts ?? 0) > 1)).toBe(true);
    for (const chat of ['c0', 'c1', 'c2']) {
      const texts = chats
        .of('telegram')
        .filter((m) => m.to === chat)
        .map((m) => Number(m.text));
      expect(texts).toEqual([...texts].sort((a, b) => a - b));
      expect(texts).toHaveLength(10);
    }
  });

  it('a refusal no retry mends fails at once, and "redeliver" sends it again', async () => {
    const channel = await driver.createChannel({
      destinations: [{ kind: 'telegram', bot_token: '222:NEW', chat_id: '9' }],
    });
    const id = await send(channel, { order: { id: 5 } });
    await answered(channel);
    const [failed] = await deliveredAll([id]);
    expect(failed?.deliveries[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_status: 401,
      last_error: 'Unauthorized',
    });
    chats.telegramTokens.add('222:NEW');
    const res = await driver.api('post', `/events/${id}/redeliver`);
    expect(res.status).toBeLessThan(300);
    const [again] = await deliveredAll([id]);
    expect(again?.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(chats.of('telegram').map((m) => m.to)).toEqual(['9']);
  });

  it("Brain Logs shows each attempt's answer per destination, and delivers one destination again", async () => {
    const channel = await driver.createChannel({
      destinations: [
        { kind: 'telegram', bot_token: '333:FIRST', chat_id: '31' },
        { kind: 'telegram', bot_token: '444:SECOND', chat_id: '41' },
      ],
    });
    const id = await send(channel, { order: { id: 6 } });
    await answered(channel);
    const [failed] = await deliveredAll([id]);
    expect(failed?.deliveries.map((d) => d.status)).toEqual(['failed', 'failed']);
    const [first, second] = failed?.deliveries ?? [];

    const panel = new PanelClient(app);
    await panel.signIn();
    const page = await panel.page(`/logs/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Each attempt's answer (1)");
    expect(page.text).toMatch(
      /<td>HTTP 401<\/td><td class="attempt-error text-error">Unauthorized<\/td>/,
    );
    expect(page.text).toContain(`name="destination_id" value="${first?.destination_id}"`);
    expect(page.text).not.toContain('333:FIRST');

    chats.telegramTokens.add('333:FIRST');
    const again = await panel.form(`/logs/${id}/deliver-again`, {
      destination_id: first?.destination_id as string,
    });
    expect(again.status).toBe(303);
    const [after] = await deliveredAll([id]);
    expect(after?.deliveries).toMatchObject([
      { destination_id: first?.destination_id, status: 'delivered', attempts: 2 },
      { destination_id: second?.destination_id, status: 'failed', attempts: 1 },
    ]);
    expect(chats.of('telegram').map((m) => m.to)).toEqual(['31']);
  });
});
