import { expect, it } from 'vitest';
import { useFixture } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';

// Events have no foreign keys (migration 0014): deleting their channel or workspace by hand,
// which no code path does, must still take them, and their deliveries, along.

const database = useFixture(() => createTestDatabase(), { stop: (started) => started.drop() });

/** A workspace with two channels of two events each, one of them with a delivery. */
async function seed(name: string) {
  const { rows } = await database.db.query<{ workspace_id: string; channel_ids: string[] }>(
    `with w as (insert into workspaces (name, chat_quota) values ($1, 10) returning id),
     c as (
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
       select w.id, $1 || n, 'x', $1 || '-token-' || n, $1 || '-hash-' || n
       from w, generate_series(1, 2) as n
       returning id, workspace_id
     ),
     e as (
       insert into events (workspace_id, channel_id, payload)
       select workspace_id, id, '{}' from c, generate_series(1, 2)
       returning id, channel_id
     ),
     d as (
       insert into deliveries (event_id, channel_id, webhook_id, type)
       select id, channel_id, $1 || '-delivery', 'event.replied'
       from e order by id limit 1
     )
     select (select id from w) as workspace_id, array_agg(id order by id) as channel_ids from c`,
    [name],
  );
  return rows[0] as { workspace_id: string; channel_ids: string[] };
}

const countEvents = async (workspaceId: string) =>
  (
    await database.db.query<{ n: number }>(
      'select count(*)::integer as n from events where workspace_id = $1',
      [workspaceId],
    )
  ).rows[0]?.n;

const countDeliveries = async (name: string) =>
  (
    await database.db.query<{ n: number }>(
      'select count(*)::integer as n from deliveries where webhook_id = $1',
      [`${name}-delivery`],
    )
  ).rows[0]?.n;

it('deletes the events of a deleted channel, and only those', async () => {
  const { workspace_id, channel_ids } = await seed('one-channel');
  await database.db.query('delete from channels where id = $1', [channel_ids[0]]);
  const { rows } = await database.db.query<{ channel_id: string }>(
    'select distinct channel_id from events where workspace_id = $1',
    [workspace_id],
  );
  expect(rows).toEqual([{ channel_id: channel_ids[1] }]);
});

it('deletes the events and deliveries of a deleted workspace', async () => {
  const kept = await seed('kept');
  const { workspace_id } = await seed('deleted');
  expect(await countEvents(workspace_id)).toBe(4);
  expect(await countDeliveries('deleted')).toBe(1);

  await database.db.query('delete from workspaces where id = $1', [workspace_id]);
  expect(await countEvents(workspace_id)).toBe(0);
  expect(await countDeliveries('deleted')).toBe(0);
  expect(await countEvents(kept.workspace_id)).toBe(4);
  expect(await countDeliveries('kept')).toBe(1);
});
