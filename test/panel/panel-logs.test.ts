import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, BODY_LIMIT: '2kb' } });
const client = useSignedInAdmin(app);

/** The ids of the events a Brain Logs page lists, top to bottom. */
const listedIds = (html: string) =>
  [...html.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)].map((m) => m[1]);

/** The detail shown beside the list when a row is opened. */
const detailOf = async (eventId: string) => (await client.page(`/logs/${eventId}/panel`)).text;

/** The payload block of an event's detail, laid out when it is JSON, as the admin reads it. */
async function payloadOf(eventId: string): Promise<string> {
  const match = /<pre class="event-payload"[^>]*>([^<]*)<\/pre>/.exec(await detailOf(eventId));
  return unescapeHtml(match?.[1] ?? '');
}

/** One row of a Brain Logs page, as HTML. */
function rowOf(html: string, eventId: string): string {
  const start = html.indexOf(`id="event-${eventId}"`);
  return html.slice(start, html.indexOf('</li>', start));
}

async function newChannel(name: string, template = 'Order {{order.id}}') {
  const id = await client.createChannel(name, template);
  return { id, url: await client.webhookUrl(id) };
}

/** Refusals answer without an event id; the stored event is the channel's newest. */
async function lastEventOf(channelId: string): Promise<string> {
  const events = await driver.eventsOf(channelId);
  return String(events[events.length - 1]?.id);
}

async function receivedAt(eventId: string, iso: string) {
  await app.ctx.db.query('update events set received_at = $2 where id = $1', [eventId, iso]);
}

describe('Brain Logs', () => {
  describe('on an app of its own, with no channels yet', () => {
    const { app: fresh } = useTestApp({ env: ADMIN_ENV });
    const other = useSignedInAdmin(fresh);

    it('starts with a hint when the workspace has no channels', async () => {
      const html = (await other.page('/logs')).text;
      expect(html).toContain('No channels yet');
      expect(html).toContain('href="/channels/new"');
    });
  });

  it('lists events newest first, one line each, the payload in its detail', async () => {
    const { url } = await newChannel('Listed');
    const first = await driver.sendEvent(url, { order: { id: 1 } });
    const second = await driver.sendEvent(url, { order: { id: 2 } });
    const html = (await client.page('/logs')).text;
    const ids = listedIds(html);
    expect(ids.indexOf(String(second.body.event_id))).toBeLessThan(
      ids.indexOf(String(first.body.event_id)),
    );
    const row = rowOf(html, String(second.body.event_id));
    expect(row).toMatch(
      /<time class="c-time" datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">\d\d-\d\d \d\d:\d\d:\d\d<\/time>/,
    );
    expect(row).toContain('<span class="c-channel">Listed</span>');
    expect(row).toContain('badge-pending');
    expect(row).toContain('<span class="c-outcome">Waiting for the AI</span>');
    expect(row).toContain(`href="/logs/${second.body.event_id}"`);
    expect(await payloadOf(String(second.body.event_id))).toBe(
      '{\n  "order": {\n    "id": 2\n  }\n}',
    );
  });

  it('pretty-prints JSON without changing a number, and shows other bodies exactly as received', async () => {
    const { id, url } = await newChannel('Exact');
    const json = await driver.sendEvent(
      url,
      '{"price":1.50,"big":9007199254740993,"e":1E+2,"s":"a\\u0000b"}',
    );
    await driver.sendEvent(url, '{"order": {"id": 1,,}');
    const broken = await lastEventOf(id);
    expect(await payloadOf(String(json.body.event_id))).toBe(
      '{\n  "price": 1.50,\n  "big": 9007199254740993,\n  "e": 1E+2,\n  "s": "a\\u0000b"\n}',
    );
    expect(await payloadOf(broken)).toBe('{"order": {"id": 1,,}');
  });

  it.each([
    ['invalid_json', '{"a":', 'application/json', 400, 'Refused: the body is not valid JSON'],
    [
      'payload_not_object',
      '[1, 2]',
      'application/json',
      400,
      'Refused: the body is JSON but not an object',
    ],
    [
      'unsupported_media_type',
      'a=1&b=2',
      'application/x-www-form-urlencoded',
      415,
      'Refused: the body was not sent as JSON',
    ],
    [
      'payload_too_large',
      `{"a":"${'x'.repeat(3000)}"}`,
      'application/json',
      413,
      'Refused: the body is larger than the size limit',
    ],
  ])(
    'lists a request refused with %s with its HTTP code, and explains it in words a sender understands',
    async (code, body, contentType, httpStatus, words) => {
      const { id, url } = await newChannel(`Refused ${code}`);
      const res = await driver.sendEvent(url, body, { contentType });
      expect(res.body.code).toBe(code);
      const eventId = await lastEventOf(id);
      const row = rowOf((await client.page(`/logs?channel=${id}`)).text, eventId);
      expect(row).toMatch(new RegExp(`badge-rejected"[^>]*>Rejected ${httpStatus}</span>`));
      expect(row).toContain(`<span class="c-outcome">${code.replace(/_/g, ' ')}</span>`);
      expect(unescapeHtml(await detailOf(eventId))).toContain(words);
    },
  );

  it('explains refusals for a disabled channel and a used-up quota', async () => {
    const { id, url } = await newChannel('Refusals');
    await client.form(`/channels/${id}/disable`);
    await driver.sendEvent(url);
    await client.form(`/channels/${id}/enable`);
    await driver.setWorkspace({ chat_quota: 0 });
    await driver.sendEvent(url);
    await driver.setWorkspace({ chat_quota: 1000 });
    const [quota, disabled] = listedIds((await client.page(`/logs?channel=${id}`)).text);
    expect(unescapeHtml(await detailOf(disabled as string))).toContain(
      'Refused: the channel is disabled',
    );
    expect(unescapeHtml(await detailOf(quota as string))).toContain(
      "Refused: the workspace has used this month's chat quota",
    );
  });

  it("explains a refusal for a spent budget, and shows each event's cost", async () => {
    const { id, url } = await newChannel('Costs');
    const paid = String((await driver.sendEvent(url, { order: { id: 7 } })).body.event_id);
    const unknown = String((await driver.sendEvent(url, { order: { id: 8 } })).body.event_id);
    await app.ctx.db.query(
      `update events set status = 'replied', attempts = 1, completed_at = now(),
         cost_usd = case when id = $1 then 0.00042 end
       where id in ($1, $2)`,
      [paid, unknown],
    );
    await driver.setWorkspace({ monthly_budget_usd: 0 });
    await driver.sendEvent(url);
    await driver.setWorkspace({ monthly_budget_usd: null });
    const html = (await client.page(`/logs?channel=${id}`)).text;
    const [refused] = listedIds(html);
    expect(unescapeHtml(await detailOf(refused as string))).toContain(
      "Refused: the workspace has spent this month's AI budget",
    );
    expect(rowOf(html, paid)).toContain('<span class="c-cost">$0.00042</span>');
    expect(rowOf(html, unknown)).toContain('<span class="c-cost">unknown</span>');
    const page = (await client.page(`/logs/${paid}`)).text;
    expect(page).toContain('<dd class="event-cost" data-usd="0.00042">$0.00042</dd>');
    expect((await client.page(`/logs/${unknown}`)).text).toContain('Unknown: no price');
  });

  it('shows a cost nobody knows as unknown, never as $0, each call’s included', async () => {
    const { id, url } = await newChannel('Unknown costs');
    const eventId = String((await driver.sendEvent(url, { order: { id: 9 } })).body.event_id);
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    };
    const call = { status: 'ok', http_status: 200, error: null, latency_ms: 5, usage };
    // The model nobody priced answered; the free one (a model run in-house) costs 0.
    const calls = [
      { ...call, provider: 'default', model: 'house-model', cost_usd: null },
      { ...call, provider: 'default', model: 'free-model', cost_usd: 0 },
    ];
    await app.ctx.db.query(
      `update events set status = 'replied', attempts = 1, completed_at = now(), cost_usd = 0,
         calls = $2::jsonb
       where id = $1`,
      [eventId, JSON.stringify(calls)],
    );
    const html = (await client.page(`/logs?channel=${id}`)).text;
    expect(rowOf(html, eventId)).toContain('<span class="c-cost">unknown</span>');
    expect(await detailOf(eventId)).toContain(' · cost unknown');
    const page = unescapeHtml((await client.page(`/logs/${eventId}`)).text);
    expect(page).toContain(
      '<dd class="event-cost" data-usd="0">unknown: 1 of its calls cost an unknown amount',
    );
    expect([...page.matchAll(/<td class="num call-cost">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(
      ['unknown', '$0'],
    );
  });

  it('shows the prompt, the reply, the error and the attempts', async () => {
    const { id, url } = await newChannel('Answered');
    const replied = String((await driver.sendEvent(url, { order: { id: 5 } })).body.event_id);
    const failed = String((await driver.sendEvent(url, { order: { id: 6 } })).body.event_id);
    await app.ctx.db.query(
      `update events set status = 'replied', prompt = 'Order 5', reply = 'Thanks for order 5!', attempts = 1, completed_at = now() where id = $1`,
      [replied],
    );
    await app.ctx.db.query(
      `update events set status = 'failed', prompt = 'Order 6', error = 'AI server answered 500', attempts = 5, completed_at = now() where id = $1`,
      [failed],
    );
    const html = (await client.page(`/logs?channel=${id}`)).text;
    expect(rowOf(html, replied)).toContain('<span class="c-outcome">Thanks for order 5!</span>');
    expect(rowOf(html, replied)).toContain('badge-replied');
    expect(html).toContain(`<li class="event-row is-error" id="event-${failed}"`);
    expect(rowOf(html, failed)).toContain('<span class="c-outcome">AI server answered 500</span>');
    expect(rowOf(html, failed)).toContain('badge-failed');
    const repliedDetail = await detailOf(replied);
    expect(repliedDetail).toMatch(/<pre class="event-prompt"[^>]*>Order 5<\/pre>/);
    expect(repliedDetail).toMatch(/<pre class="event-reply"[^>]*>Thanks for order 5!<\/pre>/);
    // Outcome first: the reply comes before the prompt and the payload.
    expect(repliedDetail.indexOf('event-reply')).toBeLessThan(
      repliedDetail.indexOf('event-prompt'),
    );
    const failedDetail = await detailOf(failed);
    expect(failedDetail).toContain(
      '<pre class="event-error" tabindex="0">AI server answered 500</pre>',
    );
    expect((await client.page(`/logs/${failed}`)).text).toContain('<dt>Attempts</dt><dd>5</dd>');
  });

  it('filters by channel and by status', async () => {
    const a = await newChannel('Filter A');
    const b = await newChannel('Filter B');
    const inA = String((await driver.sendEvent(a.url)).body.event_id);
    const inB = String((await driver.sendEvent(b.url)).body.event_id);
    await driver.sendEvent(b.url, '[]');
    const rejectedInB = await lastEventOf(b.id);
    expect(listedIds((await client.page(`/logs?channel=${a.id}`)).text)).toEqual([inA]);
    expect(listedIds((await client.page(`/logs?channel=${b.id}`)).text)).toEqual([
      rejectedInB,
      inB,
    ]);
    expect(listedIds((await client.page(`/logs?channel=${b.id}&status=rejected`)).text)).toEqual([
      rejectedInB,
    ]);
    const filtered = await client.page(`/logs?channel=${b.id}&status=replied`);
    expect(filtered.text).toContain('No events match');
  });

  it('finds events by a UTC time range: from inclusive, to exclusive', async () => {
    const { id, url } = await newChannel('Timed');
    const morning = String((await driver.sendEvent(url)).body.event_id);
    const noon = String((await driver.sendEvent(url)).body.event_id);
    await receivedAt(morning, '2024-03-10T09:00:00Z');
    await receivedAt(noon, '2024-03-10T12:00:00Z');
    const page = (query: string) =>
      client.page(`/logs?channel=${id}&${query}`).then((res) => listedIds(res.text));
    expect(await page('from=2024-03-10T09:00&to=2024-03-10T12:00')).toEqual([morning]);
    expect(await page('from=2024-03-10T09:00:01')).toEqual([noon]);
    expect(await page('from=2024-03-10T08:00&to=2024-03-10T12:00:01')).toEqual([noon, morning]);
    const html = (await client.page(`/logs?channel=${id}&from=2024-03-10T09:00`)).text;
    expect(html).toContain('value="2024-03-10T09:00"');
    expect(html).toContain('From (UTC)');
  });

  it('offers quick ranges that become an absolute From', async () => {
    const { id, url } = await newChannel('Quick');
    const old = String((await driver.sendEvent(url)).body.event_id);
    const recent = String((await driver.sendEvent(url)).body.event_id);
    await receivedAt(old, new Date(Date.now() - 2 * 3_600_000).toISOString());
    const res = await client.page(`/logs?channel=${id}&since=1h`);
    expect(listedIds(res.text)).toEqual([recent]);
    expect(res.text).toMatch(/id="from" name="from" value="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"/);
    expect(listedIds((await client.page(`/logs?channel=${id}&since=24h`)).text)).toEqual([
      recent,
      old,
    ]);
    const all = (await client.page('/logs')).text;
    for (const since of ['1h', '24h', '7d']) expect(all).toContain(`since=${since}`);
  });

  it('says when a date cannot be read', async () => {
    const res = await client.page('/logs?from=yesterday');
    expect(res.status).toBe(200);
    expect(unescapeHtml(res.text)).toContain('“yesterday” is not a date and time');
  });

  it('pages through older events with a cursor, without repeats or gaps', async () => {
    const { id, url } = await newChannel('Many');
    const sent: string[] = [];
    for (let i = 0; i < 57; i++)
      sent.push(String((await driver.sendEvent(url, { order: { id: i } })).body.event_id));
    const first = await client.page(`/logs?channel=${id}`);
    const next = /<a class="button" href="([^"]+)" rel="next">/.exec(first.text)?.[1];
    expect(next).toBeTruthy();
    const second = await client.page(unescapeHtml(next as string));
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain('Newest events');
    const listed = [...listedIds(first.text), ...listedIds(second.text)];
    expect(listed).toEqual([...sent].reverse());
  });

  it('sends its pages, script and styles compressed', async () => {
    for (const path of ['/logs', '/static/logs.js', '/static/panel.css']) {
      const res = await client.page(path).set('Accept-Encoding', 'gzip');
      expect(res.status, path).toBe(200);
      expect(res.headers['content-encoding'], path).toBe('gzip');
    }
  });

  it('refuses a cursor it did not give out', async () => {
    expect((await client.page('/logs?cursor=garbage')).status).toBe(400);
  });

  it("opens one event's page with everything shown", async () => {
    const { url } = await newChannel('Single');
    const eventId = String((await driver.sendEvent(url, { order: { id: 8 } })).body.event_id);
    const res = await client.page(`/logs/${eventId}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<h1>Event #${eventId} `);
    const payload =
      /<pre class="event-payload" id="pretty-payload" tabindex="0">([^<]*)<\/pre>/.exec(res.text);
    expect(unescapeHtml(payload?.[1] ?? '')).toContain('"id": 8');
    expect(res.text).toContain(
      '<pre class="event-payload" id="raw-payload" tabindex="0">{&#34;order&#34;:{&#34;id&#34;:8}}</pre>',
    );
    expect((await client.page('/logs/99999999')).status).toBe(404);
    expect((await client.page('/logs/x')).status).toBe(404);
  });
});
