import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// A channel changed through this process leaves the receiver's channel cache at once; the
// database notification tells the other processes. Here the notification is switched off, so
// only the immediate forgetting can make the old URL stop working.

let app: TestApp;
let driver: Driver;

beforeAll(async () => {
  app = await startTestApp();
  driver = new Driver(app);
  await app.ctx.ingest.stop();
});
afterAll(() => app.close());

/** The sender's later look at an event: answered from the cached channel alone. */
const fetchEvent = (webhookUrl: string, eventId: unknown) =>
  fetch(`${webhookUrl}/events/${String(eventId)}`).then(async (res) => ({
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
  }));

describe('the receiver forgets a changed channel at once', () => {
  it('a regenerated URL', async () => {
    const channel = await driver.createChannel();
    const sent = await driver.sendEvent(channel.webhook_url);
    expect((await fetchEvent(channel.webhook_url, sent.body.event_id)).status).toBe(200);
    const renewed = await driver.api('post', `/channels/${channel.id}/regenerate-url`).expect(200);

    const old = await fetchEvent(channel.webhook_url, sent.body.event_id);
    expect(old).toMatchObject({ status: 404, body: { code: 'channel_not_found' } });
    const current = await fetchEvent(renewed.body.webhook_url, sent.body.event_id);
    expect(current.status).toBe(200);
  });

  it('a deleted channel', async () => {
    const channel = await driver.createChannel();
    const sent = await driver.sendEvent(channel.webhook_url);
    expect((await fetchEvent(channel.webhook_url, sent.body.event_id)).status).toBe(200);
    await driver.api('delete', `/channels/${channel.id}`).expect(204);

    const gone = await fetchEvent(channel.webhook_url, sent.body.event_id);
    expect(gone).toMatchObject({ status: 404, body: { code: 'channel_not_found' } });
  });
});
