import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { FakeChats } from '../support/fake-chats.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';

let app: TestApp;
let chats: FakeChats;
let client: PanelClient;
let driver: Driver;

beforeAll(async () => {
  chats = await FakeChats.start();
  app = await startTestApp({
    env: { ...ADMIN_ENV, ...chats.env, DELIVERY_RETRY_SCHEDULE: '10ms' },
  });
  client = new PanelClient(app);
  driver = new Driver(app);
  await client.signIn();
});
afterAll(async () => {
  await app.close();
  await chats.close();
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
    expect(page).toMatch(/telegram #\d+/);
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
    expect(editor).toMatch(/<strong>telegram<\/strong> #\d+ — on, token ••••••••/);
    expect(editor).toContain('<span class="destination-rate">100 %</span>');
    expect(editor).toContain(`href="/logs/${id}"`);
    expect(editor).not.toContain('5:LATER');
  });
});
