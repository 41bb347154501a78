import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { sha256Hex } from '../../src/platform/secrets.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';

const SEALED_URL = 'https://replier:Reply-Pass-4d3c2b1a@replies.example.com/in?token=rq-9f8e';
const GONE_URL = 'https://gone.example.com/in';
const GONE_REASON = 'The reply URL answered 410 Gone';

interface Upgraded {
  sealed: string;
  gone: string;
  offWithoutUrl: string;
  untouched: string;
  /** The sealed URL as the channel's row held it. */
  storedUrl: string;
  sealedEvent: string;
  goneEvent: string;
}

/**
 * A database as the versions before migration 0045 left it: reply URLs on the channels' rows (one
 * sealed for its password, one turned off by a 410, one channel turned off without a URL, one
 * never set), and a pending message to each URL.
 */
const database = useFixture(
  async () => {
    const started = await createTestDatabase({ migrated: false });
    const { db } = started;
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((m) => m.version < '0045'),
    );
    const storedUrl = new SecretBox(Buffer.from(started.secretsKey, 'hex')).seal(SEALED_URL);
    const { rows } = await db.query<{ id: string; name: string }>(
      `with w as (insert into workspaces (name, is_default, chat_quota)
                  values ('Default workspace', true, 100) returning id)
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash,
                             reply_url, reply_enabled, reply_disabled_reason, reply_secret)
       select w.id, c.name, 'Order {{order.id}}', c.name || '-token', c.hash, c.url, c.enabled,
              c.reason, 'whsec_dXBncmFkZS1yZXBseS11cmw='
       from w, (values ('sealed', $1, $2, true, null),
                       ('gone', $3, $4, false, $5),
                       ('off-without-url', $6, null, false, null),
                       ('untouched', $7, null, true, null)) as c(name, hash, url, enabled, reason)
       returning id, name`,
      [
        sha256Hex('sealed-token'),
        storedUrl,
        sha256Hex('gone-token'),
        GONE_URL,
        GONE_REASON,
        sha256Hex('off-without-url-token'),
        sha256Hex('untouched-token'),
      ],
    );
    const id = (name: string) => rows.find((row) => row.name === name)?.id as string;
    await db.query(
      `insert into destinations (channel_id, position, kind, conditions, message, url)
       values ($1, 0, 'webhook', '[]', '{{reply}}', 'https://hooks.example.com/in')`,
      [id('sealed')],
    );
    // Finishing an event makes its message to the reply URL (the trigger as it was then).
    const events = await db.query<{ id: string; channel_id: string }>(
      `insert into events (workspace_id, channel_id, status, payload)
       select workspace_id, id, 'pending', '{"order": {"id": 1}}' from channels
       where id in ($1, $2)
       returning id, channel_id`,
      [id('sealed'), id('gone')],
    );
    await db.query(`update events set status = 'replied', reply = 'Done'`);
    const eventOf = (channel: string) =>
      events.rows.find((row) => row.channel_id === id(channel))?.id as string;
    const upgraded: Upgraded = {
      sealed: id('sealed'),
      gone: id('gone'),
      offWithoutUrl: id('off-without-url'),
      untouched: id('untouched'),
      storedUrl,
      sealedEvent: eventOf('sealed'),
      goneEvent: eventOf('gone'),
    };
    return Object.assign(started, { upgraded });
  },
  { stop: (started) => started.drop() },
);
const { app, driver } = useTestApp({ database: () => database });

describe('upgrading to the reply URL as a destination (migration 0045)', () => {
  it('keeps every reply URL, its state and its waiting messages, and the API shows them as before', async () => {
    const { upgraded } = database;
    const replyDelivery = async (id: string) =>
      (await driver.api('get', `/channels/${id}`).expect(200)).body.reply_delivery as unknown;
    expect(await replyDelivery(upgraded.sealed)).toEqual({
      url: SEALED_URL.replace(':Reply-Pass-4d3c2b1a@', '@'),
      enabled: true,
      disabled_reason: null,
    });
    expect(await replyDelivery(upgraded.gone)).toEqual({
      url: GONE_URL,
      enabled: false,
      disabled_reason: GONE_REASON,
    });
    expect(await replyDelivery(upgraded.offWithoutUrl)).toEqual({
      url: null,
      enabled: false,
      disabled_reason: null,
    });
    expect(await replyDelivery(upgraded.untouched)).toEqual({
      url: null,
      enabled: true,
      disabled_reason: null,
    });

    // The sealed URL moved as it was stored; the channels' columns are gone.
    const { rows } = await app.ctx.db.query<{ channel_id: string; url: string | null }>(
      `select channel_id, url from destinations where role = 'reply_url' order by channel_id`,
    );
    expect(rows).toEqual([
      { channel_id: upgraded.sealed, url: upgraded.storedUrl },
      { channel_id: upgraded.gone, url: GONE_URL },
      { channel_id: upgraded.offWithoutUrl, url: null },
    ]);
    const columns = await app.ctx.db.query(
      `select column_name from information_schema.columns
       where table_name = 'channels' and column_name like 'reply%' order by column_name`,
    );
    expect(columns.rows.map((row) => row.column_name)).toEqual([
      'reply_previous_secret',
      'reply_previous_until',
      'reply_secret',
    ]);

    // The reply URL is not one of the channel's destinations.
    const sealed = await driver.api('get', `/channels/${upgraded.sealed}`).expect(200);
    expect(sealed.body.destinations).toMatchObject([
      { kind: 'webhook', url: 'https://hooks.example.com/in' },
    ]);

    // The waiting messages: pending to the URL that is on, held for the one a 410 turned off.
    const delivery = async (eventId: string) =>
      (await driver.api('get', `/events/${eventId}`).expect(200)).body.delivery as unknown;
    expect(await delivery(upgraded.sealedEvent)).toMatchObject({ status: 'pending' });
    expect(await delivery(upgraded.goneEvent)).toMatchObject({ status: 'held' });
    await driver
      .api('patch', `/channels/${upgraded.gone}`)
      .send({ reply_delivery: { enabled: true } })
      .expect(200);
    expect(await replyDelivery(upgraded.gone)).toEqual({
      url: GONE_URL,
      enabled: true,
      disabled_reason: null,
    });
    expect(await delivery(upgraded.goneEvent)).toMatchObject({ status: 'pending' });
  });
});
