import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useFakeChats, useTestApp } from '../support/harness.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';

const chats = useFakeChats();
const { app, driver, ai } = useTestApp({ ai: true, env: () => chats.env });

/** The recipe's channel exactly as the bots guide shows it, after a heading that names it. */
function recipe(name: string): Record<string, unknown> {
  const guide = readFileSync('docs/guides/chat-bots.md', 'utf8');
  const after = guide.slice(guide.indexOf(`**Recipe: ${name}`));
  const json = /```json\n([\s\S]*?)```/.exec(after)?.[1];
  if (!json) throw new Error(`no recipe ${name}`);
  return JSON.parse(json) as Record<string, unknown>;
}

async function finished(channel: ChannelJson, count: number): Promise<void> {
  await eventually(async () => {
    await app.ctx.worker?.runOnce();
    await app.ctx.deliveryWorker?.runOnce();
    // requests refused at the door are kept in Brain Logs as `rejected`: not answered
    const events = (await driver.eventsOf(channel.id)).filter((e) => e.status !== 'rejected');
    const ids = events.map((e) => e.id);
    const bodies = await Promise.all(ids.map((id) => driver.api('get', `/events/${id}`)));
    const done = bodies.every(
      (res) =>
        res.body.status === 'filtered' ||
        (res.body.deliveries.length > 0 &&
          res.body.deliveries.every((d: { status: string }) => d.status === 'delivered')),
    );
    return events.length === count && done;
  });
}

describe('the bots guide recipes', () => {
  it('a Telegram bot with memory answers each message in its chat, and ignores bots', async () => {
    const settings = recipe('a Telegram bot with memory');
    chats.telegramTokens.add('123456:ABC-your-bot-token');
    const channel = await driver.createChannel(settings);
    const headers = { 'X-Telegram-Bot-Api-Secret-Token': 'a-long-random-string' };
    const update = (id: number, text: string, isBot = false) => ({
      update_id: id,
      message: { message_id: id, from: { id: 9, is_bot: isBot }, chat: { id: 555 }, text },
    });

    const wrong = await driver.sendEvent(channel.webhook_url, update(1, 'hi'), {
      headers: { 'X-Telegram-Bot-Api-Secret-Token': 'guess' },
    });
    expect(wrong.status).toBe(401);
    await driver.sendEvent(channel.webhook_url, update(10, 'I am Ann'), { headers });
    await finished(channel, 1);
    await driver.sendEvent(channel.webhook_url, update(11, 'Who am I?'), { headers });
    const bot = await driver.sendEvent(channel.webhook_url, update(12, 'beep', true), { headers });
    expect(bot.body.status).toBe('filtered');
    await finished(channel, 3);

    expect(chats.of('telegram').map((m) => [m.to, m.thread, m.text])).toEqual([
      ['555', '10', 'Fake model reply to: I am Ann'],
      ['555', '11', 'Fake model reply to: Who am I?'],
    ]);
    // memory: the second call carries the first exchange
    const second = ai.requests.at(-1)?.body as { messages: { content: string }[] };
    expect(second.messages.map((m) => m.content)).toEqual([
      'I am Ann',
      'Fake model reply to: I am Ann',
      'Who am I?',
    ]);
  });

  it('a Slack bot passes the handshake and answers each mention in its thread', async () => {
    const settings = recipe('a Slack bot answering in threads');
    const slack = SIGNERS.find((signer) => signer.scheme === 'slack');
    if (!slack) throw new Error('no slack signer');
    chats.slackTokens.add('xoxb-your-bot-token');
    const channel = await driver.createChannel(settings);
    const post = async (body: unknown) => {
      const text = JSON.stringify(body);
      const headers = await slack.sign(text, "the app's signing secret", nowSeconds());
      return driver.sendEvent(channel.webhook_url, text, { headers });
    };
    const handshake = await post({ type: 'url_verification', challenge: 'c-1' });
    expect(handshake.body).toEqual({ challenge: 'c-1' });

    const mention = {
      type: 'event_callback',
      event_id: 'Ev1',
      event: {
        type: 'app_mention',
        text: '<@U0> status?',
        channel: 'C9',
        ts: '1700.5',
        user: 'U1',
      },
    };
    await post(mention);
    expect((await post(mention)).body.duplicate).toBe(true);
    const fromBot = await post({
      type: 'event_callback',
      event_id: 'Ev2',
      event: { type: 'message', text: 'echo', channel: 'C9', ts: '1700.6', bot_id: 'B1' },
    });
    expect(fromBot.body.status).toBe('filtered');
    await finished(channel, 2);

    expect(chats.of('slack').map((m) => m.body)).toEqual([
      { channel: 'C9', thread_ts: '1700.5', text: 'Fake model reply to: &lt;@U0&gt; status?' },
    ]);
  });
});
