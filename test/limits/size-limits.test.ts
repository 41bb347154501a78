import { beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../src/brain-logs/event-pages.js';
import { byteSize } from '../../src/panel/format.js';
import { LIST_TEXT_LIMIT } from '../../src/panel/logs/log-event-view.js';
import { parseLogFilter } from '../../src/panel/logs/log-filters.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, BODY_LIMIT: '1mb' } });
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel({ name: 'Limits' });
});

const KEPT = 65_536;

async function lastEvent() {
  const events = await driver.eventsOf(channel.id);
  const last = events[events.length - 1];
  return (await driver.api('get', `/events/${last?.id}`).expect(200)).body as {
    id: string;
    status: string;
    payload: string;
    payload_truncated: boolean;
    error: string | null;
  };
}

describe('payloads byte for byte', () => {
  it('keeps the UTF-8 byte-order mark of an accepted body', async () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"order":{"id":"ün"}}'),
    ]);
    const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(body));
    expect(res.status).toBe(200);
    const event = await lastEvent();
    expect(Buffer.from(event.payload, 'utf8')).toEqual(body);
    expect(event).toMatchObject({ status: 'pending', payload_truncated: false });
  });

  it('keeps only the first 64 KB of a refused body, with payload_truncated', async () => {
    const text = 'é'.repeat(100_000); // 200 000 bytes, two per character
    expect(
      (await driver.sendEvent(channel.webhook_url, text, { contentType: 'text/plain' })).status,
    ).toBe(415);
    const refused = await lastEvent();
    expect(refused).toMatchObject({ error: 'unsupported_media_type', payload_truncated: true });
    expect(Buffer.byteLength(refused.payload)).toBe(KEPT);
    expect(refused.payload).toBe(text.slice(0, KEPT / 2));
    const admin = new PanelClient(app);
    await admin.signIn();
    const shown = await admin.page(`/logs/${refused.id}`).expect(200);
    expect(shown.text).toContain('its first 64 KB: the rest of this refused body was not kept');

    // Past BODY_LIMIT too; a character cut in two at the 64 KB mark is left out whole.
    const large = `{"a":"x${'€'.repeat(400_000)}"}`;
    expect((await driver.sendEvent(channel.webhook_url, large)).status).toBe(413);
    const tooLarge = await lastEvent();
    expect(tooLarge).toMatchObject({ error: 'payload_too_large', payload_truncated: true });
    expect(Buffer.byteLength(tooLarge.payload)).toBeLessThanOrEqual(KEPT);
    expect(Buffer.byteLength(tooLarge.payload)).toBeGreaterThan(KEPT - 3);
    expect(large.startsWith(tooLarge.payload)).toBe(true);

    // A short refused body is kept whole.
    expect((await driver.sendEvent(channel.webhook_url, '[1]')).status).toBe(400);
    expect(await lastEvent()).toMatchObject({ payload: '[1]', payload_truncated: false });
  });

  it('keeps only the first 64 KB of a valid body refused for the quota or a reused key', async () => {
    // Three bytes a character: the 64 KB mark falls inside one, which is left out whole.
    const body = (n: number) => `{"n":${n},"text":"${'€'.repeat(30_000)}"}`;
    const keyed = { headers: { 'Idempotency-Key': 'kept-64kb' } };
    expect((await driver.sendEvent(channel.webhook_url, body(1), keyed)).status).toBe(200);
    expect((await driver.sendEvent(channel.webhook_url, body(2), keyed)).status).toBe(422);
    const reused = await lastEvent();
    expect(reused).toMatchObject({ error: 'idempotency_key_reused', payload_truncated: true });
    expect(Buffer.byteLength(reused.payload)).toBe(KEPT - 1);
    expect(body(2).startsWith(reused.payload)).toBe(true);

    const used = (await driver.api('get', '/workspace').expect(200)).body.chats_used as number;
    await driver.setWorkspace({ chat_quota: used }).expect(200);
    try {
      expect((await driver.sendEvent(channel.webhook_url, body(3))).status).toBe(403);
      const refused = await lastEvent();
      expect(refused).toMatchObject({ error: 'quota_exceeded', payload_truncated: true });
      expect(body(3).startsWith(refused.payload)).toBe(true);
      expect(Buffer.byteLength(refused.payload)).toBe(KEPT - 1);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });
});

describe('big pages', () => {
  const EVENTS = 24;
  const PAYLOAD_BYTES = 900 * 1024;

  beforeAll(async () => {
    const big = await driver.createChannel({ name: 'Big' });
    // Stored straight in the database: 21 MB through HTTP would only slow the test down.
    await app.ctx.db.query(
      `insert into events (workspace_id, channel_id, status, payload, received_at)
       select workspace_id, id, 'pending',
              '{"n":' || n || ',"pad":"' || repeat('"', $2::integer) || '"}',
              now() - n * interval '1 second'
       from channels, generate_series(1, $1::integer) as n where id = $3`,
      [EVENTS, PAYLOAD_BYTES, big.id],
    );
    channel = big;
  });

  it('returns fewer events than the limit when they are large, with a cursor, and pages through all', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await driver
        .api(
          'get',
          `/events?channel_id=${channel.id}&limit=500${cursor ? `&cursor=${cursor}` : ''}`,
        )
        .expect(200);
      const bytes = Buffer.byteLength(res.text);
      // Payloads full of quotes double in size as JSON: the page is cut by its JSON, not its text.
      expect(bytes).toBeLessThanOrEqual(PAGE_BYTES + 4096);
      const page = res.body as {
        data: { id: string; payload: string }[];
        next_cursor: string | null;
      };
      expect(page.data.length).toBeGreaterThan(0);
      expect(page.data.length).toBeLessThan(EVENTS);
      for (const event of page.data)
        expect(Buffer.byteLength(event.payload)).toBeGreaterThan(PAYLOAD_BYTES);
      seen.push(...page.data.map((event) => event.id));
      cursor = page.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(new Set(seen).size).toBe(EVENTS);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil((EVENTS * PAYLOAD_BYTES * 2) / PAGE_BYTES));
  });

  it('shows Brain Logs as one line per event, not whole payloads', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const res = await client.page(`/logs?channel=${channel.id}`).expect(200);
    const ids = [...res.text.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)];
    expect(ids).toHaveLength(EVENTS);
    // 24 rows of one line each, not 24 × 900 KB.
    expect(res.text.length).toBeLessThan(256 * 1024);
    const one = await client.page(`/logs/${ids[0]?.[1]}`).expect(200);
    expect(one.text.length).toBeGreaterThan(PAYLOAD_BYTES);
  });
});

describe('Brain Logs list previews of long payloads', () => {
  let admin: PanelClient;
  let listed: ChannelJson;

  /** Stores a payload as it is, straight in the database (bytes the receiver would keep). */
  async function store(payload: string): Promise<string> {
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into events (workspace_id, channel_id, status, payload)
       select workspace_id, id, 'pending', $2 from channels where id = $1 returning id`,
      [listed.id, payload],
    );
    return rows[0]?.id as string;
  }

  /** The size and the start of the payload the list reads for one event (see log-pages.ts). */
  async function rowOf(id: string, search = '') {
    const { rows } = await app.ctx.db.query<{ workspace_id: string }>(
      'select workspace_id from channels where id = $1',
      [listed.id],
    );
    const { filter } = parseLogFilter({ channel: listed.id, search });
    const page = await app.ctx.eventPages.listPreviews(
      rows[0]?.workspace_id as string,
      { ...filter, limit: 50 },
      LIST_TEXT_LIMIT + 1,
    );
    const event = page.data.find((e) => e.id === id);
    return { size: byteSize(event?.payload_bytes ?? 0), payload: event?.payload ?? '' };
  }

  beforeAll(async () => {
    admin = new PanelClient(app);
    await admin.signIn();
    listed = await driver.createChannel({ name: 'Previews' });
  });

  it('shows the whole payload’s size, not the preview’s, with or without a payload search', async () => {
    const payload = `{"order":{"status":"paid"},"pad":"${'é'.repeat(30_000)}"}`;
    const id = await store(payload);
    const whole = byteSize(Buffer.byteLength(payload));
    expect(whole).toBe('58.6 KB');
    const plain = await rowOf(id);
    expect(plain.payload.length).toBe(LIST_TEXT_LIMIT + 1); // one character past: it is cut
    expect(plain.size).toBe(whole);
    // A payload search reads whole rows, then cuts them: the same size.
    expect((await rowOf(id, 'order.status = paid')).size).toBe(whole);
    const page = await admin.page(`/logs/${id}`).expect(200);
    expect(page.text).toContain(
      `<dt>Size</dt><dd>${Buffer.byteLength(payload).toLocaleString('en')} bytes</dd>`,
    );
  });

  it('gives a preview a byte-order mark only when its payload starts with one', async () => {
    // 20,004 bytes: the preview (20,001 characters) is exactly three bytes shorter.
    const plain = `{"pad":"${'x'.repeat(LIST_TEXT_LIMIT + 4 - 10)}"}`;
    expect(Buffer.byteLength(plain)).toBe(LIST_TEXT_LIMIT + 4);
    const marked = `\uFEFF${plain}`;
    const plainRow = await rowOf(await store(plain));
    expect(plainRow.payload.startsWith('{"pad"')).toBe(true);
    expect(plainRow.size).toBe(byteSize(LIST_TEXT_LIMIT + 4));
    const markedRow = await rowOf(await store(marked));
    expect(markedRow.payload.startsWith('\uFEFF{"pad"')).toBe(true);
    expect(markedRow.size).toBe(byteSize(LIST_TEXT_LIMIT + 7));
  });
});
