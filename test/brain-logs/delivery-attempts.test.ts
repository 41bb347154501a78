import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useFakeChats, useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
const chats = useFakeChats();
const { app, driver } = useTestApp({
  env: () => ({
    ...chats.env,
    ...ADMIN_ENV,
    DELIVERY_ALLOW_PRIVATE: 'true',
    DELIVERY_RETRY_SCHEDULE: '5ms,5ms,5ms',
    DELIVERY_TIMEOUT_MS: '2000',
  }),
});
let panel: PanelClient;

beforeAll(async () => {
  chats.telegramTokens.add('555:ECHO');
  chats.echoSecrets = true;
  panel = new PanelClient(app);
  await panel.signIn();
});

type Delivery = { status: string };
type EventBody = { delivery: Delivery | null; deliveries: Delivery[] };

/**
 * Sends an event to the channel (unless `sent` names one), lets the worker answer it and
 * delivers until nothing is open.
 */
async function deliveredEvent(channel: ChannelJson, sent?: string): Promise<string> {
  let id = sent;
  if (id === undefined) {
    const res = await driver.sendEvent(channel.webhook_url, { order: { id: 1 } });
    expect(res.status).toBe(200);
    id = res.body.event_id as string;
  }
  await app.ctx.worker?.runOnce();
  await eventually(
    async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = (await driver.api('get', `/events/${id}`)).body as EventBody;
      const all = [...(event.delivery ? [event.delivery] : []), ...event.deliveries];
      return all.every((d) => d.status === 'delivered' || d.status === 'failed');
    },
    { what: 'every message of the event ended' },
  );
  return id;
}

/** The event's attempts as stored, oldest first. */
async function attemptRows(eventId: string) {
  const { rows } = await app.ctx.db.query<{ status: number; target: string; answer: string }>(
    `select status, target, answer from delivery_attempts
     join deliveries on deliveries.id = delivery_attempts.delivery_id
     where deliveries.event_id = $1
     order by deliveries.destination_id nulls first, delivery_attempts.id`,
    [eventId],
  );
  return rows;
}

describe("each delivery attempt's target and answer", () => {
  it('shows where a reply went, without its query, and what the receiver answered each time', async () => {
    const token = 'query-token-7f3a9c';
    const channel = await driver.createChannel({ template: 'Order {{order.id}}' });
    const url = receiver.url(`/replies?token=${token}`).replace('http://', 'http://user:pw@');
    expect((await driver.updateChannel(channel.id, { reply_delivery: { url } })).status).toBe(200);
    receiver.enqueue(
      { status: 500, body: `Down for maintenance (token=${token})\n\n  back   soon` },
      { status: 200, body: 'Stored as reply r-42' },
    );
    const id = await deliveredEvent(channel);

    const target = `http://127.0.0.1:${receiver.port}/replies`;
    expect(await attemptRows(id)).toEqual([
      { status: 500, target, answer: 'Down for maintenance ([secret]) back soon' },
      { status: 200, target, answer: 'Stored as reply r-42' },
    ]);
    for (const path of [`/logs/${id}`, `/logs/${id}/panel`]) {
      const page = await panel.page(path);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`Sent to <code>${target}</code>`);
      expect(page.text).toContain(
        '<pre class="answer-excerpt" tabindex="0">Down for maintenance ([secret]) back soon</pre>',
      );
      expect(page.text).toContain(
        '<pre class="answer-excerpt" tabindex="0">Stored as reply r-42</pre>',
      );
      expect(page.text).not.toContain(token);
      expect(page.text).not.toContain('user:pw');
    }
  });

  it("names each attempt's target under it when the reply URL changed between attempts", async () => {
    const channel = await driver.createChannel({ template: 'Order {{order.id}}' });
    const reply = (url: string) => driver.updateChannel(channel.id, { reply_delivery: { url } });
    await reply(receiver.url('/before'));
    receiver.enqueue({ status: 503, body: 'Moved: use /after' });
    const res = await driver.sendEvent(channel.webhook_url, { order: { id: 2 } });
    const id = res.body.event_id as string;
    await app.ctx.worker?.runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      return (await attemptRows(id)).length === 1;
    });
    await reply(receiver.url('/after'));
    await deliveredEvent(channel, id);

    const page = await panel.page(`/logs/${id}`);
    const sentTo = [...page.text.matchAll(/Sent to <code>([^<]*)<\/code>/g)].map((m) => m[1]);
    expect(sentTo).toEqual([receiver.url('/before'), receiver.url('/after')]);
  });

  it('keeps the first 512 characters of a long answer, collapsed under a preview', async () => {
    const channel = await driver.createChannel({ template: 'Order {{order.id}}' });
    const url = receiver.url('/long');
    expect((await driver.updateChannel(channel.id, { reply_delivery: { url } })).status).toBe(200);
    // 3 bytes each in UTF-8: 3000 bytes, more than a client keeping 1 KB would read
    receiver.enqueue({ status: 200, body: '€'.repeat(1000) });
    const id = await deliveredEvent(channel);

    expect((await attemptRows(id)).map((row) => row.answer)).toEqual(['€'.repeat(512)]);
    const page = await panel.page(`/logs/${id}`);
    expect(page.text).toContain(`<summary><code class="answer-preview">${'€'.repeat(120)}…</code>`);
    expect(page.text).toContain(`<pre tabindex="0">${'€'.repeat(512)}</pre>`);
  });

  it("names a Telegram chat and a Slack webhook's host, and cuts their secrets out of the answers", async () => {
    const hook = chats.webhookUrl('slack-webhook', 'XyZsecretHookPath');
    const channel = await driver.createChannel({
      destinations: [
        { kind: 'telegram', bot_token: '555:ECHO', chat_id: '77' },
        { kind: 'slack', webhook_url: hook },
      ],
    });
    const id = await deliveredEvent(channel);

    const host = new URL(chats.baseUrl).host;
    const rows = await attemptRows(id);
    expect(rows.map((row) => [row.status, row.target])).toEqual([
      [200, 'Telegram sendMessage to chat 77'],
      [200, `Slack Incoming Webhook (${host})`],
    ]);
    // the fake echoed the token and the hook's URL: both cut out
    expect(rows[0]?.answer).toMatch(/^\{"ok":true,"result":\{.*"via":"bot\[secret\]"\}\}$/);
    expect(rows[1]?.answer).toBe('ok, posted to [secret]');
    const page = await panel.page(`/logs/${id}`);
    expect(page.text).toContain('Sent to <code>Telegram sendMessage to chat 77</code>');
    expect(page.text).toContain(`Sent to <code>Slack Incoming Webhook (${host})</code>`);
    expect(page.text).toContain('ok, posted to [secret]');
    for (const secret of ['555:ECHO', 'XyZsecretHookPath']) {
      expect(JSON.stringify(rows)).not.toContain(secret);
      expect(page.text).not.toContain(secret);
    }
  });
});
