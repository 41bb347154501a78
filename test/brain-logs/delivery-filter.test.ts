import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { SseClient, type SseMessage } from '../support/sse-client.js';
import { ADMIN_ENV, PanelClient, cookieSet, unescapeHtml } from '../panel/panel-client.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true' } });
let panel: PanelClient;
let session: string;
let workspaceId: string;
let shop: string;
let quiet: string;
let slack: string;
let telegram: string;
const open: SseClient[] = [];
/** The events of each case, by name. */
const ids: Record<string, string> = {};

const REPLY = 'reply_url';
type Target = typeof REPLY | string;

/**
 * An event of the channel, finished as the worker finishes one (the trigger of migration 0025
 * makes its messages: the reply URL's and one per enabled destination), its messages then put
 * in these states as the delivery worker would leave them.
 */
async function finishedEvent(channelId: string, states: [Target, string][] = []): Promise<string> {
  const { rows } = await app.ctx.db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, status, payload)
     values ($1, $2, 'pending', '{}') returning id::text`,
    [workspaceId, channelId],
  );
  const id = rows[0]?.id as string;
  await app.ctx.db.query(`update events set status = 'replied' where id = $1`, [id]);
  for (const [target, state] of states) await setState(id, target, state);
  return id;
}

async function setState(eventId: string, target: Target, state: string): Promise<void> {
  const { rowCount } = await app.ctx.db.query(
    `update deliveries set state = $3
     where event_id = $1 and destination_id is not distinct from $2::bigint`,
    [eventId, target === REPLY ? null : target, state],
  );
  expect(rowCount).toBe(1);
}

const listedIds = (html: string) =>
  [...html.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)].map((m) => m[1] as string);

/** The events /logs lists for this query string, sorted. */
async function listed(query: string): Promise<string[]> {
  const res = await panel.page(`/logs?${query}`);
  expect(res.status).toBe(200);
  return listedIds(res.text).sort();
}

const of = (...names: string[]) => names.map((name) => ids[name] as string).sort();

beforeAll(async () => {
  panel = new PanelClient(app);
  session = cookieSet(await panel.signIn(), 'hookprompt_session') as string;
  const channel = await driver.createChannel({
    name: 'Shop',
    reply_delivery: { url: 'http://127.0.0.1:9/reply' },
    destinations: [
      { kind: 'slack', token: 'xoxb-test', channel: 'C1' },
      { kind: 'telegram', bot_token: '111:BOT', chat_id: '5' },
    ],
  });
  shop = channel.id;
  const destinations = (channel as unknown as { destinations: { id: string }[] }).destinations;
  [slack, telegram] = destinations.map((d) => d.id) as [string, string];
  quiet = (await driver.createChannel({ name: 'Quiet' })).id;
  const { rows } = await app.ctx.db.query<{ workspace_id: string }>(
    'select workspace_id::text from channels where id = $1',
    [shop],
  );
  workspaceId = rows[0]?.workspace_id as string;

  const delivered: [Target, string][] = [
    [REPLY, 'delivered'],
    [slack, 'delivered'],
    [telegram, 'delivered'],
  ];
  ids.replyFailed = await finishedEvent(shop, [
    [REPLY, 'failed'],
    [slack, 'delivered'],
    [telegram, 'delivered'],
  ]);
  // One destination delivered, the other failed: it has a failed delivery.
  ids.slackFailed = await finishedEvent(shop, [
    [REPLY, 'delivered'],
    [slack, 'failed'],
    [telegram, 'delivered'],
  ]);
  ids.allDelivered = await finishedEvent(shop, delivered);
  // Replayed: its first reply message failed, the newest (of its new outcome) was delivered.
  ids.replayed = await finishedEvent(shop, delivered);
  await app.ctx.db.query(
    `insert into deliveries (event_id, channel_id, webhook_id, type, state)
     values ($1, $2, 'msg_replayed', 'event.replied', 'delivered')`,
    [ids.replayed, shop],
  );
  await app.ctx.db.query(
    `update deliveries set state = 'failed' where id = (select min(id) from deliveries
       where event_id = $1 and destination_id is null)`,
    [ids.replayed],
  );
  ids.waiting = await finishedEvent(shop, [
    [REPLY, 'pending'],
    [slack, 'sending'],
    [telegram, 'delivered'],
  ]);
  // Its message to Telegram waits while Telegram is off: held.
  ids.held = await finishedEvent(shop, [
    [REPLY, 'delivered'],
    [slack, 'delivered'],
    [telegram, 'pending'],
  ]);
  await app.ctx.db.query('update destinations set enabled = false where id = $1', [telegram]);
  ids.none = await finishedEvent(quiet);
});

afterAll(() => {
  for (const client of open) client.close();
});

describe('the Delivery filter of Brain Logs', () => {
  it('lists exactly the events with a failed delivery, to the reply URL or a destination', async () => {
    expect(await listed('delivery=failed')).toEqual(of('replyFailed', 'slackFailed'));
    expect(await listed(`delivery=failed&delivery_to=${REPLY}`)).toEqual(of('replyFailed'));
    expect(await listed(`delivery=failed&delivery_to=${slack}`)).toEqual(of('slackFailed'));
    expect(await listed(`delivery=failed&delivery_to=${telegram}`)).toEqual([]);
    expect(await listed(`channel=${quiet}&delivery=failed`)).toEqual([]);
  });

  it('lists the events with a message delivered, pending, held, or none at all', async () => {
    expect(await listed('delivery=delivered')).toEqual(
      of('replyFailed', 'slackFailed', 'allDelivered', 'replayed', 'waiting', 'held'),
    );
    expect(await listed('delivery=pending')).toEqual(of('waiting'));
    expect(await listed(`delivery=pending&delivery_to=${slack}`)).toEqual(of('waiting'));
    expect(await listed('delivery=held')).toEqual(of('held'));
    expect(await listed('delivery=none')).toEqual(of('none'));
    expect(await listed(`delivery=none&delivery_to=${REPLY}`)).toEqual(of('none'));
    // Any state, to one target: the events with a message to it.
    expect(await listed(`delivery_to=${slack}`)).toHaveLength(6);
  });

  it('says the filter in the title and the form, and counts and charts only its events', async () => {
    const res = await panel.page(`/logs?channel=${shop}&delivery=failed&delivery_to=${slack}`);
    const title = unescapeHtml(/<title>([^<]*)<\/title>/.exec(res.text)?.[1] ?? '');
    expect(title).toContain(`Brain Logs · Shop · Delivery failed · to Slack #C1`);
    expect(res.text).toMatch(/<option value="failed" selected>/);
    expect(res.text).toContain(`<option value="${slack}" selected>Slack #C1</option>`);
    expect(res.text).toMatch(/<strong id="event-total" data-exact="true">1<\/strong> event match/);
    const data = /id="volume-chart"[^>]*data-volume="([^"]*)"/.exec(res.text)?.[1] ?? '{}';
    expect(JSON.parse(unescapeHtml(data))).toMatchObject({ total: 1 });
    const warned = await panel.page('/logs?delivery=lost');
    expect(warned.text).toContain('There is no delivery state “lost”');
    expect(listedIds(warned.text)).toHaveLength(Object.keys(ids).length);
  });

  it('exports only the filter’s events', async () => {
    const res = await panel.page('/logs/export?delivery=failed&format=jsonl');
    expect(res.status).toBe(200);
    const exported = res.text
      .trim()
      .split('\n')
      .map((line) => String((JSON.parse(line) as { id: string }).id));
    expect(exported.sort()).toEqual(of('replyFailed', 'slackFailed'));
  });

  it('links each failure group of deliveries to exactly the events whose delivery to it failed', async () => {
    const html = (await panel.page('/logs')).text;
    const section = /<details class="card failures"[\s\S]*?<\/details>/.exec(html)?.[0] ?? '';
    const groups = [
      ...section.matchAll(/<li data-delivery-kind[^>]*>\s*<a href="([^"]+)"[\s\S]*?<\/li>/g),
    ].map((m) => ({
      href: unescapeHtml(m[1] as string),
      words: (m[0] as string)
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    }));
    // The replayed event's first message failed, but its newest was delivered: not counted.
    expect(groups.map((g) => g.words.replace(/ · last .*$/, '')).sort()).toEqual([
      'Delivery failed delivery to Slack #C1 failed ×1 Shop',
      'Delivery failed delivery to the reply URL failed ×1 Shop',
    ]);
    const toSlack = groups.find((g) => g.words.includes('Slack'))?.href ?? '';
    expect(new URL(toSlack, app.baseUrl).searchParams.get('delivery')).toBe('failed');
    expect(await listed(toSlack.replace(/^\/logs\?/, ''))).toEqual(of('slackFailed'));
    const toReplyUrl = groups.find((g) => g.words.includes('reply URL'))?.href ?? '';
    expect(await listed(toReplyUrl.replace(/^\/logs\?/, ''))).toEqual(of('replyFailed'));
  });

  it('does not push live an event the filter does not match', async () => {
    const tail = async (query: string) => {
      const client = await SseClient.open(`${app.baseUrl}/logs/stream?${query}`, {
        Cookie: `hookprompt_session=${session}`,
        Accept: 'text/event-stream',
      });
      open.push(client);
      return client;
    };
    const failed = await tail('delivery=failed');
    const all = await tail('');
    const about = (id: string) => (message: SseMessage) =>
      (JSON.parse(message.data) as { id: string }).id === id;
    const quietOne = await finishedEvent(quiet);
    // A message that failed before the event's last change: the change is pushed.
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into events (workspace_id, channel_id, status, payload)
       values ($1, $2, 'pending', '{}') returning id::text`,
      [workspaceId, quiet],
    );
    const failing = rows[0]?.id as string;
    await app.ctx.db.query(
      `insert into deliveries (event_id, channel_id, webhook_id, type, state)
       values ($1, $2, 'msg_live', 'event.replied', 'failed')`,
      [failing, quiet],
    );
    await app.ctx.db.query(`update events set status = 'replied' where id = $1`, [failing]);
    await all.waitFor(about(failing));
    await failed.waitFor(about(failing));
    expect(all.messages.some(about(quietOne))).toBe(true);
    expect(failed.messages.some(about(quietOne))).toBe(false);
  });
});
