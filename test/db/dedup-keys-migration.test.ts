import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { useFixture } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * Migration 0015 moves the dedup keys from their own table onto their events. A key still in
 * its window must keep making retries duplicates across the upgrade; an expired one is dropped.
 */
describe('upgrading to dedup keys on events (migration 0015)', () => {
  const database = useFixture(() => createTestDatabase({ migrated: false }), {
    stop: (started) => started.drop(),
  });

  it('keeps each unexpired key on its event, and drops expired ones with the old table', async () => {
    const { db } = database;
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((m) => m.version < '0015'),
    );
    const { rows } = await db.query<{ channel_id: string; fresh: string; stale: string }>(
      `with w as (insert into workspaces (name, chat_quota) values ('upgrade', 10) returning id),
       c as (insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
             select id, 'upgrade', 'Hi', 'token', 'hash' from w returning id, workspace_id),
       e as (insert into events (workspace_id, channel_id, status, payload)
             select workspace_id, id, 'pending', '{}' from c, generate_series(1, 2)
             returning id, channel_id)
       select min(channel_id) as channel_id, min(id) as fresh, max(id) as stale from e`,
    );
    const { channel_id: channelId, fresh, stale } = rows[0]!;
    await db.query(
      `insert into dedup_keys (channel_id, key, event_id, expires_at) values
         ($1, 'fresh-key', $2, now() + interval '1 hour'),
         ($1, 'stale-key', $3, now() - interval '1 hour')`,
      [channelId, fresh, stale],
    );

    expect(await migrate(db)).toContain('0015_dedup_keys_on_events');

    const events = await db.query<{ id: string; dedup_key: string | null; window_open: boolean }>(
      `select id, dedup_key, dedup_expires_at > now() as window_open from events order by id`,
    );
    expect(events.rows).toEqual([
      { id: fresh, dedup_key: 'fresh-key', window_open: true },
      { id: stale, dedup_key: null, window_open: null },
    ]);
    const table = await db.query(`select to_regclass('dedup_keys') as t`);
    expect(table.rows[0]).toEqual({ t: null });
  });
});
