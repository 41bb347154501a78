import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { VOLUME_SCAN_LIMIT } from '../../src/brain-logs/events-volume.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({
  env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_RETRY_SCHEDULE: '10ms' },
});
const client = useSignedInAdmin(app);
let channelId: string;
let url: string;
const ids: string[] = [];

const listedIds = (html: string) =>
  [...html.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)].map((m) => m[1]);

beforeAll(async () => {
  channelId = await client.createChannel('Shop', 'Order {{order.id}} is {{order.status}}');
  url = await client.webhookUrl(channelId);
  for (const [id, status] of [
    [1, 'paid'],
    [2, 'open'],
    [3, 'paid'],
  ] as const) {
    const res = await driver.sendEvent(url, { order: { id, status }, note: `note ${id}` });
    ids.push(res.body.event_id as string);
  }
  await driver.setWorkspace({ chat_quota: 3 });
  // Over the quota: a refused request, kept with its reason.
  await driver.sendEvent(url, { order: { id: 4, status: 'paid' } });
  await createWorker(app.ctx).runOnce();
  await driver.setWorkspace({ chat_quota: 1000 });
});

describe('Brain Logs for operators (panel)', () => {
  it('searches with path = value, free text, or both', async () => {
    const paid = await client.page(`/logs?search=${encodeURIComponent('order.status = paid')}`);
    expect(paid.status).toBe(200);
    expect(listedIds(paid.text)).toHaveLength(3);
    expect(paid.text).toMatch(
      /<strong id="event-total" data-exact="true">3<\/strong> events match/,
    );
    const both = await client.page(
      `/logs?search=${encodeURIComponent('order.status=paid note 3')}`,
    );
    expect(listedIds(both.text)).toEqual([ids[2]]);
    const text = await client.page('/logs?search=NOTE%202');
    expect(listedIds(text.text)).toEqual([ids[1]]);
    expect(text.text).toContain('id="clear-filters"');
  });

  it('shows why a request was refused without opening it', async () => {
    const html = (await client.page('/logs?status=rejected')).text;
    const row = /<li class="event-row is-error"[\s\S]*?<\/li>/.exec(html)?.[0] ?? '';
    expect(row).toMatch(/badge-rejected"[^>]*>Rejected 403<\/span>/);
    expect(row).toContain('<span class="c-outcome">quota exceeded</span>');
  });

  it('draws the volume chart from the filter’s counts per hour and status', async () => {
    const html = (await client.page('/logs')).text;
    const data = /id="volume-chart"[^>]*data-volume="([^"]*)"/.exec(html)?.[1];
    const volume = JSON.parse(unescapeHtml(data ?? '{}'));
    expect(volume.unit).toBe('hour');
    expect(volume.buckets).toHaveLength(25);
    expect(volume.total).toBe(4);
    expect(volume.series.replied.reduce((a: number, b: number) => a + b, 0)).toBe(3);
    expect(volume.series.rejected.reduce((a: number, b: number) => a + b, 0)).toBe(1);
    // Chart.js is not loaded with the page: logs.js fetches it when the chart is opened.
    expect(html).not.toContain('chart.umd.js');
    const chart = await client.page('/vendor/chart.umd.js');
    expect(chart.status).toBe(200);
    expect(chart.headers['content-type']).toMatch(/javascript/);
  });

  it('downloads the filter’s events as CSV', async () => {
    const html = (await client.page('/logs?search=order.status%3Dpaid')).text;
    const href = unescapeHtml(
      /href="(\/logs\/export\?[^"]*format=csv[^"]*)"/.exec(html)?.[1] ?? '',
    );
    const res = await client
      .page(href)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (chunk: Buffer) => (text += chunk));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
    const rows = parse(res.body as string) as string[][];
    expect(rows[0]?.[0]).toBe('id');
    expect(rows).toHaveLength(4);
  });

  it('asks before a bulk replay, with the dry-run count, and replays on confirmation', async () => {
    const confirm = await client.page(`/logs/replay?search=order.status%3Dpaid`);
    expect(confirm.status).toBe(200);
    // Two replied events and one refused request with a complete object body.
    expect(confirm.text).toContain('id="replay-count" data-count="3"');
    expect(confirm.text).toContain('name="search" value="order.status=paid"');
    const done = await client.form('/logs/replay', { search: 'order.status=paid' });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/logs?search=order.status%3Dpaid');
    const after = await client.page(done.headers.location as string);
    expect(after.text).toContain('3 events sent to the AI again.');
    await createWorker(app.ctx).runOnce();
  });

  it('replays one event from its page and shows the earlier outcome', async () => {
    const id = ids[1] as string;
    const page = await client.page(`/logs/${id}`);
    expect(page.text).toContain('id="replay-event"');
    expect(page.text).toContain(`href="/channels/${channelId}?sample_event=${id}"`);
    expect(page.text).toContain(`href="/channels/${channelId}"`);
    expect(page.text).toMatch(/<dt>Size<\/dt><dd>\d+ bytes<\/dd>/);
    const res = await client.form(`/logs/${id}/replay`);
    expect(res.status).toBe(303);
    await createWorker(app.ctx).runOnce();
    const replayed = await client.page(`/logs/${id}`);
    expect(replayed.text).toContain(`Event #${id} sent to the AI again`);
    expect(replayed.text).toContain('<ol class="history-list">');
  });

  it("opens the editor with an event's payload as its sample", async () => {
    const res = await client.page(`/channels/${channelId}?sample_event=${ids[0]}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`The sample is the payload of event #${ids[0]}.`);
    expect(unescapeHtml(res.text)).toContain('Order 1 is paid');
  });

  it('refuses a replay without the CSRF token', async () => {
    const res = await client.form(`/logs/${ids[0]}/replay`, { _csrf: 'wrong' });
    expect(res.status).toBe(403);
  });

  it('shows each channel’s last 24 hours with refused and failed counts', async () => {
    // (The refused request above was replayed; this one stays refused.)
    expect((await driver.sendEvent(url, 'not json')).status).toBe(400);
    const html = (await client.page('/channels')).text;
    const counts = new RegExp(`data-channel-day="${channelId}">([\\s\\S]*?)</span>`).exec(
      html,
    )?.[1];
    const words = (counts ?? '')
      .replace(/<[^>]+>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    expect(words).toBe('5 total · 1 refused · 0 failed');
    expect(html).toContain('class="sparkline"');
  });

  it('groups failures by channel and cause, each linking to its events', async () => {
    const broken = await client.createChannel('Broken');
    const brokenUrl = await client.webhookUrl(broken);
    await driver.sendEvent(brokenUrl, '{"a":');
    await driver.sendEvent(brokenUrl, '[]');
    await driver.sendEvent(brokenUrl, '{"b":');
    const html = (await client.page(`/logs?channel=${broken}`)).text;
    const section = /<details class="card failures"[\s\S]*?<\/details>/.exec(html)?.[0] ?? '';
    const groups = [
      ...section.matchAll(/<strong class="text-error">([^<]+)<\/strong> ×(\d+)/g),
    ].map((m) => `${m[1]} ×${m[2]}`);
    expect(groups).toEqual(['invalid json ×2', 'payload not object ×1']);
    expect(section).toContain('Broken · last <time');
    const link = /<li data-cause="invalid_json"[^>]*>\s*<a href="([^"]+)"/.exec(section)?.[1];
    const listed = await client.page(unescapeHtml(link ?? ''));
    expect(listed.text).toMatch(/<strong id="event-total" data-exact="true">2<\/strong>/);
    expect(listedIds(listed.text)).toHaveLength(2);
  });

  it('groups failed reply deliveries by channel and target, linking to those events', async () => {
    const replying = await client.createChannel('Replying');
    await client.form(`/channels/${replying}/reply-url`, { reply_url: receiver.url() });
    // Two attempts each (DELIVERY_RETRY_SCHEDULE=10ms), every one answered 500: both fail.
    receiver.enqueue({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const replyingUrl = await client.webhookUrl(replying);
    const sent = [
      await driver.sendEvent(replyingUrl, { n: 1 }),
      await driver.sendEvent(replyingUrl, { n: 2 }),
    ].map((res) => res.body.event_id as string);
    await createWorker(app.ctx).runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const states = await Promise.all(
        sent.map(async (id) => (await driver.api('get', `/events/${id}`)).body.delivery?.status),
      );
      return states.every((state) => state === 'failed');
    });
    const html = (await client.page('/logs')).text;
    const section = /<details class="card failures"[\s\S]*?<\/details>/.exec(html)?.[0] ?? '';
    const group = new RegExp(
      `<li data-delivery-kind="webhook" data-destination-id="reply_url" data-channel-id="${replying}">([\\s\\S]*?)</li>`,
    ).exec(section)?.[1];
    const words = (group ?? '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    expect(words).toMatch(/^Delivery failed delivery to the reply URL failed ×2 Replying · last /);
    expect(section).toContain('2 failed deliveries');
    const link = /<a href="([^"]+)"/.exec(group ?? '')?.[1];
    const listed = await client.page(unescapeHtml(link ?? ''));
    expect(listed.text).toMatch(/<strong id="event-total" data-exact="true">2<\/strong>/);
    expect(listedIds(listed.text).sort()).toEqual([...sent].sort());
  });
});

describe('the chart of a payload search', () => {
  // An app of its own: the paid events sent above would be counted too.
  const { app: fresh, driver: freshDriver } = useTestApp({ env: ADMIN_ENV });
  const panel = useSignedInAdmin(fresh);

  it(`says under it when it counted only the newest ${VOLUME_SCAN_LIMIT.toLocaleString('en')} matching events`, async () => {
    const shop = await freshDriver.createChannel({ name: 'Busy shop' });
    // One more than the chart reads, all in the last hours, stored straight in the database.
    await fresh.ctx.db.query(
      `insert into events (workspace_id, channel_id, status, payload, received_at)
       select workspace_id, id, 'replied', '{"order":{"status":"paid"}}',
              now() - n * interval '100 milliseconds'
       from channels, generate_series(1, $2::integer) as n where id = $1`,
      [shop.id, VOLUME_SCAN_LIMIT + 1],
    );
    const chartOf = async () => {
      const html = (await panel.page('/logs?search=order.status%20%3D%20paid')).text;
      const data = /id="volume-chart"[^>]*data-volume="([^"]*)"/.exec(html)?.[1] ?? '{}';
      const note = /<p [^>]*id="volume-partial">([\s\S]*?)<\/p>/.exec(html)?.[1];
      return { volume: JSON.parse(unescapeHtml(data)), note: note && unescapeHtml(note) };
    };

    const capped = await chartOf();
    expect(capped.volume).toMatchObject({ partial: true, total: VOLUME_SCAN_LIMIT });
    expect(capped.note).toContain('counts only the newest 50,000 matching events');

    // Exactly as many as it reads: all are counted, and nothing is said.
    await fresh.ctx.db.query(
      'delete from events where id = (select min(id) from events where channel_id = $1)',
      [shop.id],
    );
    const whole = await chartOf();
    expect(whole.volume).toMatchObject({ partial: false, total: VOLUME_SCAN_LIMIT });
    expect(whole.note).toBeUndefined();
  }, 120_000);
});
