import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient } from '../../src/outbound/outbound-client.js';
import {
  destinationSchema,
  settingsOf,
  type DestinationSettings,
} from '../../src/destinations/destination-schemas.js';
import type { TransportDeps } from '../../src/destinations/destination-transport.js';
import { splitText } from '../../src/destinations/message-parts.js';
import { sendToDestination } from '../../src/destinations/send-to-destination.js';
import { parsePayload } from '../../src/template/index.js';
import { newSigningSecret } from '../../src/platform/secrets.js';
import { useFakeChats, useReplyReceiver } from '../support/harness.js';

const fake = useFakeChats();
// a webhook destination's far end, for the tests that need a plain HTTP server
const receiver = useReplyReceiver();
let deps: TransportDeps;
const clients: OutboundClient[] = [];

beforeAll(() => {
  fake.slackTokens.add('xoxb-good');
  fake.telegramTokens.add('123:GOOD');
  const client = new OutboundClient({ timeoutMs: 5_000, allowPrivate: true });
  clients.push(client);
  deps = {
    client,
    platformClient: client,
    slackApiUrl: `${fake.baseUrl}/slack/api`,
    telegramApiUrl: `${fake.baseUrl}/telegram`,
  };
});

afterAll(() => {
  for (const client of clients) client.close();
});

const payload = parsePayload(
  JSON.stringify({ message: { chat: { id: -1001234 }, message_id: 77 }, event: { ts: '171.5' } }),
);
const settings = (input: unknown): DestinationSettings =>
  settingsOf(destinationSchema.parse(input));
const message = (text: string) => ({ id: 'msg_1', text });

describe('slack', () => {
  it('posts chat.postMessage with the bot token, in the thread the payload names, escaped', async () => {
    const slack = settings({
      kind: 'slack',
      token: 'xoxb-good',
      channel: 'C0123',
      thread_ts: '{{event.ts}}',
    });
    const outcome = await sendToDestination(deps, slack, message('<!channel> a & b > c'), {
      payload,
    });
    expect(outcome).toEqual({
      outcome: 'delivered',
      status: 200,
      parts: 1,
      target: 'Slack chat.postMessage to C0123, thread_ts 171.5',
      answer: expect.stringMatching(/^\{"ok":true,"channel":"C0123","ts":"[\d.]+"\}$/),
    });
    const [sent] = fake.of('slack').slice(-1);
    expect(sent?.headers.authorization).toBe('Bearer xoxb-good');
    expect(sent?.body).toEqual({
      channel: 'C0123',
      text: '&lt;!channel&gt; a &amp; b &gt; c',
      thread_ts: '171.5',
    });
  });

  it('fails at once on invalid_auth, retries other errors, and honours Retry-After on 429', async () => {
    const revoked = settings({ kind: 'slack', token: 'xoxb-revoked', channel: 'C1' });
    const failed = await sendToDestination(deps, revoked, message('hi'));
    expect(failed).toEqual({
      outcome: 'fail',
      status: 200,
      error: 'invalid_auth',
      parts: 0,
      target: 'Slack chat.postMessage to C1',
      answer: '{"ok":false,"error":"invalid_auth"}',
    });

    const good = settings({ kind: 'slack', token: 'xoxb-good', channel: 'C1' });
    fake.script('slack', { status: 200, body: { ok: false, error: 'internal_error' } });
    expect(await sendToDestination(deps, good, message('hi'))).toMatchObject({
      outcome: 'retry',
      error: 'internal_error',
    });
    fake.script('slack', { status: 429, body: '', headers: { 'retry-after': '30' } });
    expect(await sendToDestination(deps, good, message('hi'))).toMatchObject({
      outcome: 'retry',
      status: 429,
      retryAfterMs: 30_000,
    });
  });

  it('posts {"text"} to an Incoming Webhook, and never shows the URL in an error', async () => {
    const url = fake.webhookUrl('slack-webhook', 'secret-path-1');
    const outcome = await sendToDestination(
      deps,
      settings({ kind: 'slack', webhook_url: url }),
      message('<@U1> hi'),
    );
    expect(outcome).toMatchObject({
      outcome: 'delivered',
      target: `Slack Incoming Webhook (${new URL(fake.baseUrl).host})`,
      answer: 'ok',
    });
    expect(fake.of('slack-webhook').at(-1)?.body).toEqual({ text: '&lt;@U1&gt; hi' });

    const gone = `${fake.baseUrl}/slack-hooks/services/T0/B0/unknown-secret`;
    const refused = await sendToDestination(
      deps,
      settings({ kind: 'slack', webhook_url: gone }),
      message('hi'),
    );
    expect(refused).toMatchObject({ outcome: 'fail', status: 404, error: 'HTTP 404: no_service' });
  });
});

describe('telegram', () => {
  const telegram = settings({
    kind: 'telegram',
    bot_token: '123:GOOD',
    chat_id: '{{message.chat.id}}',
    reply_to: '{{message.message_id}}',
  });

  it('sends plain text to the chat, answering the message the payload names', async () => {
    const outcome = await sendToDestination(deps, telegram, message('*not bold*'), { payload });
    expect(outcome).toEqual({
      outcome: 'delivered',
      status: 200,
      parts: 1,
      target: 'Telegram sendMessage to chat -1001234',
      answer: expect.stringMatching(/^\{"ok":true,"result":\{.*"text":"\*not bold\*"\}\}$/),
    });
    expect(fake.of('telegram').at(-1)?.body).toEqual({
      chat_id: -1001234,
      text: '*not bold*',
      reply_parameters: { message_id: 77, allow_sending_without_reply: true },
    });
  });

  it('cuts a long text at a line break, and a retried message repeats no part', async () => {
    const first = `${'a'.repeat(4000)}\n`;
    const text = `${first}${'b'.repeat(3000)}`;
    const before = fake.of('telegram').length;
    fake.script('telegram', 'pass', {
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 7',
        parameters: { retry_after: 7 },
      },
    });
    const partOne = await sendToDestination(deps, telegram, message(text), { payload });
    expect(partOne).toMatchObject({ outcome: 'retry', status: 429, retryAfterMs: 7_000, parts: 1 });
    const rest = await sendToDestination(deps, telegram, message(text), {
      payload,
      partsDone: partOne.parts,
    });
    expect(rest).toEqual({
      outcome: 'delivered',
      status: 200,
      parts: 2,
      target: 'Telegram sendMessage to chat -1001234',
      // the last part's answer, cut at 512 characters
      answer: expect.stringMatching(/^\{"ok":true,"result":\{.*b{400}/),
    });
    expect([...(rest.answer ?? '')]).toHaveLength(512);
    const sent = fake.of('telegram').slice(before);
    expect(sent.map((m) => m.text)).toEqual(['a'.repeat(4000), 'b'.repeat(3000)]);
    expect(sent.map((m) => m.thread)).toEqual(['77', undefined]);
  });

  it('fails at once on 403 with Telegram description, without the token', async () => {
    fake.script('telegram', {
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
    });
    const outcome = await sendToDestination(deps, telegram, message('hi'), { payload });
    expect(outcome).toEqual({
      outcome: 'fail',
      status: 403,
      error: 'Forbidden: bot was blocked by the user',
      parts: 0,
      target: 'Telegram sendMessage to chat -1001234',
      answer:
        '{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}',
    });
    const wrong = settings({ kind: 'telegram', bot_token: '999:BAD', chat_id: '5' });
    const refused = await sendToDestination(deps, wrong, message('hi'));
    expect(refused).toMatchObject({ outcome: 'fail', status: 401, error: 'Unauthorized' });
  });
});

describe('discord', () => {
  it('posts content with no mentions parsed, wait=true and the thread, cut at 2000', async () => {
    const url = fake.webhookUrl('discord', 'tok-1');
    const discord = settings({
      kind: 'discord',
      webhook_url: url,
      thread_id: '{{message.message_id}}',
    });
    const text = `@everyone ${'x'.repeat(1990)} ${'y'.repeat(100)}`;
    const outcome = await sendToDestination(deps, discord, message(text), { payload });
    expect(outcome).toMatchObject({
      outcome: 'delivered',
      status: 200,
      parts: 2,
      target: `Discord webhook (${new URL(fake.baseUrl).host}), thread 77`,
    });
    expect(outcome.answer).toMatch(/^\{"id":"\d+","content":"y{100}"\}$/);
    const sent = fake.of('discord').slice(-2);
    expect(sent.map((m) => m.body)).toEqual([
      { content: `@everyone ${'x'.repeat(1990)}`, allowed_mentions: { parse: [] } },
      { content: 'y'.repeat(100), allowed_mentions: { parse: [] } },
    ]);
    expect(sent.map((m) => m.thread)).toEqual(['77', '77']);
  });

  it('cuts the webhook token out of an error even where the error cuts the body short', async () => {
    const token = 'discord-webhook-token-0123456789';
    const url = receiver.url(`/api/webhooks/1/${token}`);
    // The error quotes the body's first 200 characters: the echoed URL ends mid-token there.
    const before = 'x'.repeat(200 - (url.length - token.length) - 6);
    receiver.enqueue({ status: 500, body: `${before}${url}` });
    const outcome = await sendToDestination(
      deps,
      settings({ kind: 'discord', webhook_url: url }),
      message('hi'),
    );
    expect(outcome).toMatchObject({ outcome: 'retry', status: 500 });
    const { error, answer } = outcome as { error: string; answer: string };
    expect(error).toContain('[secret]');
    expect(error).not.toContain('discord-webhook');
    expect(answer).not.toContain('discord-webhook');
  });

  it('waits the retry_after of a 429, and fails an unknown webhook at once without its token', async () => {
    const url = fake.webhookUrl('discord', 'tok-2');
    fake.script('discord', {
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 1.5, global: false },
    });
    const limited = await sendToDestination(
      deps,
      settings({ kind: 'discord', webhook_url: url }),
      message('hi'),
    );
    expect(limited).toMatchObject({ outcome: 'retry', status: 429, retryAfterMs: 1_500, parts: 0 });
    const unknown = `${fake.baseUrl}/discord/api/webhooks/1/very-secret-token`;
    const refused = await sendToDestination(
      deps,
      settings({ kind: 'discord', webhook_url: unknown }),
      message('hi'),
    );
    expect(refused).toMatchObject({ outcome: 'fail', status: 404 });
    expect(refused.target).toBe(`Discord webhook (${new URL(fake.baseUrl).host})`);
    expect(JSON.stringify(refused)).not.toContain('very-secret-token');
  });
});

describe('teams and webhook', () => {
  it('posts an Adaptive Card to a Teams workflow', async () => {
    const url = fake.webhookUrl('teams', 'flow-1');
    const outcome = await sendToDestination(
      deps,
      settings({ kind: 'teams', webhook_url: url }),
      message('Hello **team**'),
    );
    expect(outcome).toEqual({
      outcome: 'delivered',
      status: 202,
      parts: 1,
      target: `Teams workflow (${new URL(fake.baseUrl).host})`,
      answer: '',
    });
    expect(JSON.stringify(outcome)).not.toContain('flow-1');
    expect(fake.of('teams').at(-1)?.body).toEqual({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            type: 'AdaptiveCard',
            version: '1.4',
            body: [{ type: 'TextBlock', text: 'Hello **team**', wrap: true }],
          },
        },
      ],
    });
  });

  it('signs a webhook message as Standard Webhooks, and refuses a private address unless allowed', async () => {
    const secret = newSigningSecret();
    receiver.secrets = [secret];
    const hook = settings({ kind: 'webhook', url: receiver.url() });
    const body = JSON.stringify({
      type: 'event.replied',
      timestamp: new Date().toISOString(),
      data: { id: '1' },
    });
    const sent = await sendToDestination(deps, hook, {
      id: 'msg_abc',
      text: 'x',
      webhookBody: body,
      signingSecrets: [secret],
    });
    expect(sent).toEqual({
      outcome: 'delivered',
      status: 200,
      parts: 1,
      target: receiver.url(),
      answer: 'ok',
    });
    expect(receiver.withId('msg_abc')[0]?.verifiedWith).toEqual([secret]);

    const guarded = new OutboundClient({
      timeoutMs: 5_000,
      allowPrivate: false,
      setting: 'DELIVERY_ALLOW_PRIVATE',
    });
    clients.push(guarded);
    const refused = await sendToDestination({ ...deps, client: guarded }, hook, {
      id: 'msg_def',
      text: 'x',
      signingSecrets: [secret],
    });
    expect(refused).toMatchObject({ outcome: 'fail', status: null });
    expect(refused.outcome === 'fail' && refused.error).toContain('DELIVERY_ALLOW_PRIVATE');
    expect(receiver.withId('msg_def')).toEqual([]);
  });
});

describe('splitText', () => {
  it('cuts at a space when no line break fits, and never inside a surrogate pair', () => {
    expect(splitText('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(splitText('😀😀😀', 3)).toEqual(['😀', '😀', '😀']);
    expect(splitText('abcdef', 4)).toEqual(['abcd', 'ef']);
    expect(splitText('short', 4096)).toEqual(['short']);
  });
});
