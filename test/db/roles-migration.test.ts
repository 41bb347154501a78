import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { sha256Hex } from '../../src/platform/secrets.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';

const OLD_KEY = 'hp_a-key-made-before-roles';

/**
 * A database as the versions before roles (migration 0051) left it: a workspace with two admins,
 * an API key made on its Workspace page, and an invitation not yet followed.
 */
const database = useFixture(
  async () => {
    const started = await createTestDatabase({ migrated: false });
    const { db } = started;
    await migrate(
      db,
      (await readMigrations()).filter((m) => m.version < '0051'),
    );
    await db.query(
      `with w as (insert into workspaces (name, is_default, chat_quota)
                  values ('Default workspace', true, 100) returning id),
            a as (insert into admins (email, password_hash)
                  values ('ada@example.com', 'x'), ('bob@example.com', 'x') returning id),
            m as (insert into admin_workspaces (admin_id, workspace_id) select a.id, w.id from a, w),
            k as (insert into api_keys (workspace_id, name, prefix, key_hash)
                  select id, 'Deploy script', 'hp_a-key-m', $1 from w)
       insert into admin_invitations (workspace_id, email, token_hash, expires_at)
       select id, 'cy@example.com', $2, now() + interval '1 day' from w`,
      [sha256Hex(OLD_KEY), sha256Hex('an-old-invitation-token')],
    );
    return started;
  },
  { stop: (started) => started.drop() },
);
const { app, driver } = useTestApp({ database: () => database });

describe('upgrading to roles (migration 0051)', () => {
  it('makes the admins and the API keys from before owners, who can still do everything', async () => {
    const admins = await driver.api('get', '/admins').expect(200);
    expect(admins.body.data.map((a: { email: string; role: string }) => [a.email, a.role])).toEqual(
      [
        ['ada@example.com', 'owner'],
        ['bob@example.com', 'owner'],
      ],
    );
    const keys = await driver.api('get', '/api-keys').expect(200);
    expect(keys.body.data).toMatchObject([{ name: 'Deploy script', role: 'owner' }]);
    const old = request(app.baseUrl)
      .patch('/api/v1/workspace')
      .set('Authorization', `Bearer ${OLD_KEY}`)
      .send({ chat_quota: 200 });
    expect((await old).status).toBe(200);

    // a membership added from now on must say its role: the column has no default
    const { rows } = await app.ctx.db.query<{ column_default: string | null }>(
      `select column_default from information_schema.columns
       where table_name = 'admin_workspaces' and column_name = 'role'`,
    );
    expect(rows).toEqual([{ column_default: null }]);
  });
});
