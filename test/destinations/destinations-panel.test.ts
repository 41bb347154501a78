import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { useFakeChats, useTestApp } from '../support/harness.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';

const chats = useFakeChats();
const { app, driver } = useTestApp({
  env: () => ({ ...ADMIN_ENV, ...chats.env, DELIVERY_RETRY_SCHEDULE: '10ms' }),
});
let client: PanelClient;

beforeAll(async () => {
  client = new PanelClient(app);
  await client.signIn();
});

describe("Brain Logs' event page", () => {
  it('shows each destination\'s message, and "Deliver again" sends a failed one', async () => {
    const channel = await driver.createChannel({
      destinations: [{ kind: 'telegram', bot_token: '5:LATER', chat_id: '3' }],
    });
    const sent = await driver.sendEvent(channel.webhook_url);
    const id = sent.body.event_id as string;
    await app.ctx.worker?.runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = (await driver.api('get', `/events/${id}`)).body;
      return event.deliveries[0]?.status === 'failed';
    });
    const page = (await client.page(`/logs/${id}`)).text;
    expect(page).toContain('Destinations');
    expect(page).toContain('<td>Telegram chat 3</td>');
    expect(page).toContain('Delivery failed');
    expect(page).toContain('HTTP 401');
    expect(page).toContain('Unauthorized');
    expect(page).not.toContain('5:LATER');

    chats.telegramTokens.add('5:LATER');
    const again = await client.form(`/logs/${id}/deliver-again`);
    expect(again.status).toBeLessThan(400);
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      return chats.of('telegram').length === 1;
    });
    expect((await client.page(`/logs/${id}`)).text).toContain('Delivered');

    const editor = (await client.page(`/channels/${channel.id}`)).text;
    expect(editor).toContain('Chats and other destinations');
    expect(editor).toContain('<strong>Telegram chat 3</strong>');
    expect(editor).toContain('Last: Delivered');
    expect(editor).toContain('Token set.');
    expect(editor).toContain('<span class="destination-rate">100 %</span>');
    expect(editor).toContain(`href="/logs/${id}"`);
    expect(editor).not.toContain('5:LATER');
  });
});

describe("the editor's destination forms", () => {
  it('shows a private URL refused at its field, and saves nothing', async () => {
    const channel = await driver.createChannel({});
    const res = await client.form(`/channels/${channel.id}/destinations/new`, {
      kind: 'discord',
      discord_webhook_url: chats.webhookUrl('discord', 'private'),
      message: '{{reply}}',
      when: 'status eq "replied"',
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(
      /<p class="field-error" id="dest-new-discord_webhook_url-error">refused: [^<]+<\/p>/,
    );
    expect(res.text).toContain('id="error-summary"');
    expect((await driver.api('get', `/channels/${channel.id}`)).body.destinations).toEqual([]);
  });

  it('shows a bad `when` line at its field', async () => {
    const channel = await driver.createChannel({});
    const res = await client.form(`/channels/${channel.id}/destinations/new`, {
      kind: 'telegram',
      telegram_bot_token: '7:TOKEN',
      telegram_chat_id: '42',
      when: 'status likes "replied"',
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/id="dest-new-when-error">Line 1: write a path/);
  });
});

describe('adding, editing and testing destinations in the editor', () => {
  const { app: open, driver: openDriver } = useTestApp({
    env: () => ({ ...ADMIN_ENV, ...chats.env, DELIVERY_ALLOW_PRIVATE: 'true' }),
  });
  let openClient: PanelClient;
  beforeAll(async () => {
    openClient = new PanelClient(open);
    await openClient.signIn();
  });

  it('adds a Slack webhook and a Telegram chat, edits one keeping its secret, and tests both', async () => {
    const channel = await openDriver.createChannel({});
    const hook = chats.webhookUrl('slack-webhook', 'panel');
    const slack = await openClient.form(`/channels/${channel.id}/destinations/new`, {
      kind: 'slack',
      slack_webhook_url: hook,
      enabled: 'on',
      message: 'Reply: {{reply}}',
      when: 'status eq "replied"',
    });
    expect(slack.status).toBe(303);
    chats.telegramTokens.add('9:PANEL');
    const telegram = await openClient.form(`/channels/${channel.id}/destinations/new`, {
      kind: 'telegram',
      telegram_bot_token: '9:PANEL',
      telegram_chat_id: '1001',
      enabled: 'on',
      message: '{{reply}}',
      when: 'status eq "replied"',
    });
    expect(telegram.status).toBe(303);
    const saved = (await openDriver.api('get', `/channels/${channel.id}`)).body.destinations;
    expect(saved).toMatchObject([
      { kind: 'slack', url_set: true, message: 'Reply: {{reply}}', enabled: true },
      { kind: 'telegram', token_set: true, chat_id: '1001' },
    ]);
    const [slackId, telegramId] = saved.map((d: { id: string }) => d.id);

    const editor = (await openClient.page(`/channels/${channel.id}`)).text;
    expect(editor).not.toContain('9:PANEL');
    expect(editor).not.toContain(hook);

    // Edited with the token left empty: the stored one is kept, and the test message uses it.
    const edited = await openClient.form(`/channels/${channel.id}/destinations/${telegramId}`, {
      kind: 'telegram',
      telegram_bot_token: '',
      telegram_chat_id: '2002',
      enabled: 'on',
      message: '{{reply}}',
      when: 'status eq "replied"',
    });
    expect(edited.status).toBe(303);
    const after = (await openDriver.api('get', `/channels/${channel.id}`)).body.destinations;
    expect(after[1]).toMatchObject({ id: telegramId, chat_id: '2002', token_set: true });

    const tested = await openClient.form(`/channels/${channel.id}/destinations/${telegramId}/test`);
    expect(tested.status).toBe(303);
    const notice = (await openClient.page(`/channels/${channel.id}`)).text;
    expect(notice).toContain('Test message delivered (HTTP 200).');
    expect(chats.of('telegram').at(-1)).toMatchObject({ to: '2002' });
    expect(chats.of('telegram').at(-1)?.text).toMatch(/^Test message from hookprompt/);

    await openClient.form(`/channels/${channel.id}/destinations/${slackId}/test`);
    expect((await openClient.page(`/channels/${channel.id}`)).text).toContain(
      'Test message delivered (HTTP 200).',
    );
    expect(chats.of('slack-webhook').at(-1)?.text).toMatch(/^Test message from hookprompt/);

    // A token the platform refuses: its error code is shown, never the token.
    chats.telegramTokens.delete('9:PANEL');
    await openClient.form(`/channels/${channel.id}/destinations/${telegramId}/test`);
    const refused = (await openClient.page(`/channels/${channel.id}`)).text;
    expect(refused).toContain('Test message not delivered: HTTP 401');
    expect(refused).not.toContain('9:PANEL');

    await openClient.form(`/channels/${channel.id}/destinations/${slackId}/remove`);
    const left = (await openDriver.api('get', `/channels/${channel.id}`)).body.destinations;
    expect(left).toMatchObject([{ id: telegramId, kind: 'telegram' }]);
  });
});
