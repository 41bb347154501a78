import { describe, expect, it } from 'vitest';
import { aboutSpan } from '../../src/panel/format.js';
import { parseConfig } from '../../src/platform/config.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({
  env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_RETRY_SCHEDULE: '10ms' },
});
const client = useSignedInAdmin(app);

const valueOf = (html: string, id: string) =>
  unescapeHtml(new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(html)?.[1] ?? '');

describe('Where replies go, in the channel editor', () => {
  it('shows the three ways back with copy-ready examples and the reply secret', async () => {
    const id = await client.createChannel('Orders');
    const html = (await client.page(`/channels/${id}`)).text;
    const webhookUrl = valueOf(html, 'webhook-url');
    expect(html).toContain('Where replies go');
    expect(unescapeHtml(html)).toContain(`curl -X POST '${webhookUrl}?wait=10'`);
    expect(valueOf(html, 'fetch-url')).toBe(`${webhookUrl}/events/{event_id}`);
    const secret = valueOf(html, 'reply-secret');
    expect(secret).toMatch(/^whsec_/);
    expect((await driver.api('get', `/channels/${id}/reply-secret`)).body.secret).toBe(secret);
    expect(html).toContain('Nothing delivered yet.');
    // DELIVERY_RETRY_SCHEDULE=10ms here: one retry, soon
    expect(html).toContain(
      'Failed deliveries are retried for less than a second (up to 2 attempts in all).',
    );
  });

  it('words the retry time as DELIVERY_RETRY_SCHEDULE sets it', () => {
    const schedule = (value: string) =>
      parseConfig({ DELIVERY_RETRY_SCHEDULE: value }).delivery.retryScheduleMs.reduce(
        (sum, wait) => sum + wait,
        0,
      );
    expect(aboutSpan(schedule('5s,5m,30m,2h,5h,10h,10h'))).toBe('about a day');
    expect(aboutSpan(schedule('1m,1h,5h'))).toBe('about 6 hours');
    expect(aboutSpan(schedule('1d,1d,1d'))).toBe('about 3 days');
    expect(aboutSpan(schedule('30s,30s'))).toBe('about a minute');
  });

  it('saves the reply URL, refuses a bad one, turns delivery off and on, rotates the secret', async () => {
    const id = await client.createChannel('Deliveries');
    const bad = await client.form(`/channels/${id}/reply-url`, { reply_url: 'ftp://x' });
    expect(bad.status).toBe(303);
    expect((await client.page(`/channels/${id}`)).text).toContain('Reply URL not saved');

    const saved = await client.form(`/channels/${id}/reply-url`, { reply_url: receiver.url() });
    expect(saved.headers.location).toBe(`/channels/${id}#replies`);
    let channel = (await driver.api('get', `/channels/${id}`)).body;
    expect(channel.reply_delivery).toEqual({
      url: receiver.url(),
      enabled: true,
      disabled_reason: null,
    });

    await client.form(`/channels/${id}/reply-delivery/disable`);
    channel = (await driver.api('get', `/channels/${id}`)).body;
    expect(channel.reply_delivery.enabled).toBe(false);
    expect((await client.page(`/channels/${id}`)).text).toContain('Turn delivery on');
    await client.form(`/channels/${id}/reply-delivery/enable`);
    expect((await driver.api('get', `/channels/${id}`)).body.reply_delivery.enabled).toBe(true);

    const before = valueOf((await client.page(`/channels/${id}`)).text, 'reply-secret');
    await client.form(`/channels/${id}/reply-secret/rotate`);
    const after = valueOf((await client.page(`/channels/${id}`)).text, 'reply-secret');
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
  });
});

describe('reply delivery in Brain Logs', () => {
  it('shows the delivery state and every attempt, and delivers a failed one again', async () => {
    const id = await client.createChannel('Logged');
    await client.form(`/channels/${id}/reply-url`, { reply_url: receiver.url() });
    receiver.enqueue({ status: 500 }, { status: 503 });
    const sent = await driver.sendEvent(await client.webhookUrl(id), { order: { id: 5 } });
    const eventId = sent.body.event_id as string;
    await app.ctx.worker?.runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      return (await driver.api('get', `/events/${eventId}`)).body.delivery?.status === 'failed';
    });

    const failed = (await client.page(`/logs/${eventId}`)).text;
    expect(failed).toContain('Delivery failed');
    expect(failed).toContain('HTTP 500');
    expect(failed).toContain('HTTP 503');
    expect(failed).toContain('Deliver again');
    expect((await client.page('/logs')).text).toContain('badge-delivery-failed');

    const again = await client.form(`/logs/${eventId}/deliver-again`);
    expect(again.headers.location).toBe(`/logs/${eventId}`);
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      return (await driver.api('get', `/events/${eventId}`)).body.delivery?.status === 'delivered';
    });
    const delivered = (await client.page(`/logs/${eventId}`)).text;
    expect(delivered).toContain('Delivered');
    expect(delivered).not.toContain('Deliver again');
    expect((await client.page(`/channels/${id}`)).text).toMatch(
      /id="last-delivery"><span class="badge badge-delivery-delivered">/,
    );

    const nothing = await client.form(`/logs/${eventId}/deliver-again`);
    expect(nothing.status).toBe(409);
  });

  it('lists a replayed event’s attempts under its own delivery, the earlier outcome’s apart', async () => {
    const id = await client.createChannel('Replayed');
    await client.form(`/channels/${id}/reply-url`, { reply_url: receiver.url() });
    const sent = await driver.sendEvent(await client.webhookUrl(id), { order: { id: 6 } });
    const eventId = sent.body.event_id as string;
    const deliveredAfter = async (replays: number) => {
      await app.ctx.worker?.runOnce();
      await eventually(async () => {
        await app.ctx.deliveryWorker?.runOnce();
        const event = (await driver.api('get', `/events/${eventId}`)).body;
        return event.history.length === replays && event.delivery?.status === 'delivered';
      });
    };
    await deliveredAfter(0);
    await client.form(`/logs/${eventId}/replay`);
    await deliveredAfter(1);

    const page = (await client.page(`/logs/${eventId}`)).text;
    expect(page).toMatch(/<\/span>\s*1 attempt, last answer HTTP 200/);
    const tables = [...page.matchAll(/<table class="delivery-attempts">[\s\S]*?<\/table>/g)];
    const rowsOf = (table: string | undefined) => (table?.match(/<tr><td>/g) ?? []).length;
    expect(tables.map((t) => rowsOf(t[0]))).toEqual([1, 1]);
    expect(page).toContain('1 attempt to deliver earlier outcomes (before a replay)');
  });
});
