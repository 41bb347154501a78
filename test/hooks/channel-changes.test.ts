import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';

// A channel changed through this process leaves the receiver's channel cache at once; the
// database notification tells the other processes. Here the notification is switched off, so
// only the immediate forgetting can make the old URL stop working.

const { app, driver } = useTestApp();

beforeAll(async () => {
  await app.ctx.ingest.stop();
});

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

// A change the cache has not heard of (another instance's, before its notification arrives) is
// caught by the statement that stores the event, against the channel's committed row.
describe('a channel changed behind the cache', () => {
  const changeInDatabase = async (channelId: string, change: string) => {
    await app.ctx.db.query(`update channels set ${change} where id = $1`, [channelId]);
  };

  it('disabled: 403 channel_disabled, recorded as rejected', async () => {
    const channel = await driver.createChannel();
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    await changeInDatabase(channel.id, 'enabled = false');

    const res = await driver.sendEvent(channel.webhook_url, { after: 'disabled' });

    expect(res).toMatchObject({ status: 403, body: { code: 'channel_disabled' } });
    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => [e.status, e.error])).toEqual([
      ['pending', null],
      ['rejected', 'channel_disabled'],
    ]);
    expect(events[1]?.payload).toBe('{"after":"disabled"}');
  });

  it('deleted or given a new URL: 404, nothing stored', async () => {
    for (const change of ['deleted_at = now()', `webhook_token_hash = 'replaced'`]) {
      const channel = await driver.createChannel();
      expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
      await changeInDatabase(channel.id, change);

      const res = await driver.sendEvent(channel.webhook_url);

      expect(res, change).toMatchObject({ status: 404, body: { code: 'channel_not_found' } });
      expect(await driver.eventsOf(channel.id)).toHaveLength(1);
    }
  });
});
