import { beforeAll, expect, it } from 'vitest';
import { DatabaseTimeoutError } from '../../src/db/database.js';
import { useFixture } from '../support/harness.js';
import { createTestDatabase, testDatabaseUrl } from '../support/test-database.js';

const database = useFixture(() => createTestDatabase(), { stop: (started) => started.drop() });
let channel: { id: string; workspace_id: string };

beforeAll(async () => {
  const { rows } = await database.db.query<{ id: string; workspace_id: string }>(
    `with w as (insert into workspaces (name, chat_quota) values ('Deadlines', 10) returning id)
     insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
     select id, 'Deadlines', 'x', 'token-deadlines', 'hash-deadlines' from w
     returning id, workspace_id`,
  );
  channel = rows[0] as { id: string; workspace_id: string };
});

const insertEvent = `insert into events (workspace_id, channel_id, payload) values ($1, $2, '{}')`;
const count = async () =>
  Number(
    (
      await database.db.query<{ n: string }>(
        'select count(*) as n from events where channel_id = $1',
        [channel.id],
      )
    ).rows[0]?.n,
  );

it('fails a commit the database reaches after the transaction’s deadline, so nothing is stored', async () => {
  const commit = database.db.transaction(async (tx) => {
    await tx.query(`select set_config('hookprompt.commit_deadline', $1, true)`, [
      new Date(Date.now() - 1).toISOString(),
    ]);
    await tx.query(insertEvent, [channel.workspace_id, channel.id]);
  });
  await expect(commit).rejects.toMatchObject({ code: '57014' });
  expect(await count()).toBe(0);

  // Before its deadline, the same transaction commits.
  await database.db.transaction(async (tx) => {
    await tx.query(`select set_config('hookprompt.commit_deadline', $1, true)`, [
      new Date(Date.now() + 60_000).toISOString(),
    ]);
    await tx.query(insertEvent, [channel.workspace_id, channel.id]);
  });
  expect(await count()).toBe(1);
});

it.skipIf(!testDatabaseUrl)(
  'settles a transaction with a deadline soon after it, whatever its statements do, and commits nothing',
  async () => {
    const before = await count();
    const started = performance.now();
    const slow = database.db.transaction(
      async (tx) => {
        await tx.query(insertEvent, [channel.workspace_id, channel.id]);
        await tx.query('select pg_sleep(5)');
      },
      { deadline: Date.now() + 300 },
    );
    await expect(slow).rejects.toMatchObject({ code: '57014' });
    expect(performance.now() - started).toBeLessThan(300 + 1_000);
    expect(await count()).toBe(before);

    // A deadline already past: nothing is sent at all.
    await expect(
      database.db.transaction(async () => undefined, { deadline: Date.now() - 1 }),
    ).rejects.toBeInstanceOf(DatabaseTimeoutError);
  },
);
