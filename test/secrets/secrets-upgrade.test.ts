import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { sha256Hex } from '../../src/platform/secrets.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';
import { databaseDump, foundIn } from './secret-forms.js';

const TOKEN = 'upgrade-token-Qw8Er7Ty6Ui5Op4A';
const REPLY_URL = 'https://replier:Reply-Pass-8c7b6a5f@replies.example.com/in?token=rq-0f1e2d3c4b';
const HOOK_URL = 'https://hooks.example.com/in?sig=hook-sig-9a8b7c6d5e';
const PLAIN_URL = 'https://plain.example.com/in';
const ALERT_URL = 'https://alerter:Alert-Pass-2b3c4d5e@alerts.example.com/notify';
const SECRETS = [
  TOKEN,
  'Reply-Pass-8c7b6a5f',
  'rq-0f1e2d3c4b',
  'hook-sig-9a8b7c6d5e',
  'Alert-Pass-2b3c4d5e',
];

/**
 * A database as the versions before migration 0039 left it: the webhook token, the reply URL,
 * a `webhook` destination's URL and an alert's notify URL (in its notify document) as they were
 * given.
 */
const database = useFixture(
  async () => {
    const started = await createTestDatabase({ migrated: false });
    const { db } = started;
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((m) => m.version < '0039'),
    );
    const { rows } = await db.query<{ channel_id: string; workspace_id: string }>(
      `with w as (insert into workspaces (name, is_default, chat_quota)
                  values ('Default workspace', true, 100) returning id)
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash,
                             reply_url, reply_secret)
       select id, 'upgraded', 'Order {{order.id}}', $1, $2, $3, 'whsec_dXBncmFkZQ==' from w
       returning id as channel_id, workspace_id`,
      [TOKEN, sha256Hex(TOKEN), REPLY_URL],
    );
    const { channel_id: channelId, workspace_id: workspaceId } = rows[0]!;
    await db.query(
      `insert into destinations (channel_id, position, kind, conditions, message, url)
       values ($1, 0, 'webhook', '[]', '{{reply}}', $2), ($1, 1, 'webhook', '[]', '{{reply}}', $3)`,
      [channelId, HOOK_URL, PLAIN_URL],
    );
    await db.query(
      `insert into alerts (workspace_id, name, condition, notify)
       values ($1, 'queue', '{"type": "queue_age", "seconds": 600}', $2)`,
      [workspaceId, JSON.stringify({ kind: 'webhook', url: ALERT_URL, fields: {} })],
    );
    return started;
  },
  { stop: (started) => started.drop() },
);
const { app, driver } = useTestApp({ database: () => database });

describe('upgrading to sealed webhook tokens and secret URLs (migration 0039)', () => {
  it('the next start seals the token and every URL with credentials or a query, and the API serves them as before', async () => {
    const { rows } = await app.ctx.db.query<Record<string, string>>(
      `select c.id, c.webhook_token, r.url as reply_url, d.url as hook_url, p.url as plain_url,
              a.notify_url, a.notify::text as notify
       from channels c
       join destinations r on r.channel_id = c.id and r.role = 'reply_url'
       join destinations d on d.channel_id = c.id and d.position = 0
       join destinations p on p.channel_id = c.id and p.position = 1,
       alerts a`,
    );
    expect(rows).toHaveLength(1);
    const stored = rows[0] as Record<string, string>;
    for (const column of ['webhook_token', 'reply_url', 'hook_url', 'notify_url'])
      expect(stored[column], column).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(stored.plain_url).toBe(PLAIN_URL);
    expect(JSON.parse(stored.notify as string)).toEqual({ kind: 'webhook', fields: {} });
    const dump = await databaseDump(app.database.db, app.database.url);
    for (const secret of SECRETS) expect(foundIn(dump, secret), secret).toEqual([]);

    const channel = await driver.api('get', `/channels/${String(stored.id)}`).expect(200);
    expect(channel.body.webhook_url).toBe(`${app.baseUrl}/hooks/${TOKEN}`);
    expect(channel.body.reply_delivery.url).toBe(REPLY_URL.replace(':Reply-Pass-8c7b6a5f@', '@'));
    expect(channel.body.destinations.map((d: { url: string }) => d.url)).toEqual([
      HOOK_URL,
      PLAIN_URL,
    ]);
    const alerts = await driver.api('get', '/alerts').expect(200);
    expect(alerts.body.data[0].notify.url).toBe(ALERT_URL.replace(':Alert-Pass-2b3c4d5e@', '@'));
    const sent = await driver.sendEvent(channel.body.webhook_url as string, { order: { id: 1 } });
    expect(sent.status).toBe(200);
  });
});
