import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true' } });
const client = useSignedInAdmin(app);

const REPLY = 'reply_url';
/** Secrets the destinations hold: no page may show any of them. */
const SECRETS = [
  'xoxb-SLACKTOKEN',
  '111:TGTOKEN',
  'SLACKHOOK',
  'DISCORDTOKEN',
  'TEAMSTOKEN',
  's3cret-query',
];

let workspaceId: string;
/** The Alerts channel: a reply URL, Slack `#alerts` and Telegram chat 42. */
let alerts: string;
let slack: string;
let telegram: string;
/** The Hosts channel: no reply URL; a webhook with a secret query, Slack, Discord, Teams by URL. */
let hosts: string;
let hostTargets: string[];

/**
 * An event of the channel, finished as the worker finishes one (the trigger of migration 0025
 * makes its messages), its messages then put in these states as the delivery worker would.
 */
async function finishedEvent(channelId: string, states: [string, string][]): Promise<string> {
  const { rows } = await app.ctx.db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, status, payload)
     values ($1, $2, 'pending', '{}') returning id::text`,
    [workspaceId, channelId],
  );
  const id = rows[0]?.id as string;
  await app.ctx.db.query(`update events set status = 'replied' where id = $1`, [id]);
  for (const [target, state] of states) {
    const { rowCount } = await app.ctx.db.query(
      `update deliveries set state = $3
       where event_id = $1 and destination_id is not distinct from $2::bigint`,
      [id, target === REPLY ? null : target, state],
    );
    expect(rowCount).toBe(1);
  }
  return id;
}

/** The Delivery cell of one row of a Brain Logs page: its badge's class, title and text. */
function deliveryCell(html: string, eventId: string) {
  const start = html.indexOf(`id="event-${eventId}"`);
  const row = html.slice(start, html.indexOf('</li>', start));
  const cell = /<span class="c-delivery">([\s\S]*?)<\/span><span class="c-outcome"/.exec(
    row.replace(/>\s+</g, '><'),
  )?.[1];
  const badge = /<span class="badge (badge-delivery-\w+)"[^>]*title="([^"]*)">([^<]*)<\/span>/.exec(
    cell ?? '',
  );
  return badge
    ? { badge: badge[1], title: unescapeHtml(badge[2] as string), text: badge[3] }
    : { cell };
}

beforeAll(async () => {
  const channel = await driver.createChannel({
    name: 'Alerts',
    reply_delivery: { url: 'http://127.0.0.1:9/reply' },
    destinations: [
      { kind: 'slack', token: 'xoxb-SLACKTOKEN', channel: 'alerts' },
      { kind: 'telegram', bot_token: '111:TGTOKEN', chat_id: '42' },
    ],
  });
  alerts = channel.id;
  [slack, telegram] = (channel as unknown as { destinations: { id: string }[] }).destinations.map(
    (d) => d.id,
  ) as [string, string];
  const other = await driver.createChannel({
    name: 'Hosts',
    destinations: [
      { kind: 'webhook', url: 'https://hooks.example.com/in/path-part?key=s3cret-query' },
      { kind: 'slack', webhook_url: 'https://hooks.slack.com/services/T0/B0/SLACKHOOK' },
      { kind: 'discord', webhook_url: 'https://discord.com/api/webhooks/1/DISCORDTOKEN' },
      { kind: 'teams', webhook_url: 'https://acme.webhook.office.com/webhookb2/TEAMSTOKEN' },
    ],
  });
  hosts = other.id;
  hostTargets = (other as unknown as { destinations: { id: string }[] }).destinations.map(
    (d) => d.id,
  );
  const { rows } = await app.ctx.db.query<{ workspace_id: string }>(
    'select workspace_id::text from channels where id = $1',
    [alerts],
  );
  workspaceId = rows[0]?.workspace_id as string;
});

describe("Brain Logs' Delivery cell", () => {
  it('sums up every target of an event: failed in red, pending, delivered, skipped in grey', async () => {
    const slackFailed = await finishedEvent(alerts, [
      [REPLY, 'delivered'],
      [slack, 'failed'],
      [telegram, 'skipped'],
    ]);
    const twoFailed = await finishedEvent(alerts, [
      [REPLY, 'failed'],
      [slack, 'failed'],
      [telegram, 'delivered'],
    ]);
    const waiting = await finishedEvent(alerts, [
      [REPLY, 'delivered'],
      [slack, 'delivered'],
    ]);
    const delivered = await finishedEvent(alerts, [
      [REPLY, 'delivered'],
      [slack, 'delivered'],
      [telegram, 'skipped'],
    ]);
    const notSent = await finishedEvent(
      hosts,
      hostTargets.map((id) => [id, 'skipped']),
    );
    const html = (await client.page('/logs')).text;

    // A failing Slack message and a delivered reply URL: the Telegram message skipped on
    // purpose (its `when` did not hold) is neither sent nor an error.
    expect(deliveryCell(html, slackFailed)).toEqual({
      badge: 'badge-delivery-failed',
      text: '1 of 2 failed',
      title: 'Reply URL: Delivered\nSlack #alerts: Delivery failed\nTelegram chat 42: Not sent',
    });
    expect(deliveryCell(html, twoFailed)).toMatchObject({
      badge: 'badge-delivery-failed',
      text: '2 of 3 failed',
    });
    expect(deliveryCell(html, waiting)).toMatchObject({
      badge: 'badge-delivery-pending',
      text: '1 pending',
    });
    expect(deliveryCell(html, delivered)).toMatchObject({
      badge: 'badge-delivery-delivered',
      text: 'Delivered',
    });
    expect(deliveryCell(html, notSent)).toEqual({
      badge: 'badge-delivery-skipped',
      text: 'Not sent',
      title:
        'Webhook hooks.example.com: Not sent\nSlack hooks.slack.com: Not sent\n' +
        'Discord discord.com: Not sent\n' +
        'Teams acme.webhook.office.com: Not sent',
    });
    for (const secret of [...SECRETS, 'path-part', 'webhookb2']) expect(html).not.toContain(secret);
  });

  it('leaves the cell empty for an event with no message at all', async () => {
    const quiet = await driver.createChannel({ name: 'Quiet' });
    const id = await finishedEvent(quiet.id, []);
    const html = (await client.page('/logs')).text;
    expect(deliveryCell(html, id)).toEqual({ cell: '' });
  });
});

describe('destination names', () => {
  it('names the failure groups, the Delivery filter, the event page and the editor by where they go', async () => {
    const id = await finishedEvent(alerts, [
      [REPLY, 'delivered'],
      [slack, 'failed'],
      [telegram, 'failed'],
    ]);
    const logs = (await client.page(`/logs?channel=${alerts}`)).text;
    const failures = /<details class="card failures"[\s\S]*?<\/details>/.exec(logs)?.[0] ?? '';
    expect(failures).toContain('delivery to Slack #alerts failed');
    expect(failures).toContain('delivery to Telegram chat 42 failed');
    expect(logs).toContain(`<option value="${slack}">Slack #alerts</option>`);
    expect(logs).toContain(`<option value="${telegram}">Telegram chat 42</option>`);

    const page = (await client.page(`/logs/${id}`)).text;
    expect(page).toContain('<td>Slack #alerts</td>');
    expect(page).toContain('<td>Telegram chat 42</td>');

    const editor = (await client.page(`/channels/${alerts}`)).text;
    expect(editor).toContain('<strong>Slack #alerts</strong>');
    expect(editor).toContain('<strong>Telegram chat 42</strong>');
    const hostsEditor = (await client.page(`/channels/${hosts}`)).text;
    expect(hostsEditor).toContain('<strong>Webhook hooks.example.com</strong>');
    expect(hostsEditor).toContain('<strong>Slack hooks.slack.com</strong>');
    expect(hostsEditor).toContain('<strong>Discord discord.com</strong>');
    expect(hostsEditor).toContain('<strong>Teams acme.webhook.office.com</strong>');

    for (const html of [logs, page, editor])
      for (const secret of SECRETS) expect(html).not.toContain(secret);
    // The editor shows a webhook's URL as the API reads it back (its query as given): only the
    // chat platforms' webhook URLs, secrets whole, must not appear.
    for (const secret of ['SLACKHOOK', 'DISCORDTOKEN', 'TEAMSTOKEN'])
      expect(hostsEditor).not.toContain(secret);
  });
});
