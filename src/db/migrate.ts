import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { migrationsDir } from '../platform/paths.js';
import type { Database } from './database.js';

export interface Migration {
  version: string;
  sql: string;
}

export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: file.replace(/\.sql$/, ''),
      sql: await readFile(join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Applies the migrations not yet recorded, all in one transaction. The advisory lock makes
 * instances that start together on one database wait for each other instead of racing.
 */
export async function migrate(db: Database, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations());
  await db.exec(`create table if not exists schema_migrations (
    version text primary key,
    applied_at timestamptz not null default now()
  )`);
  return db.transaction(async (tx) => {
    // A migration takes as long as it takes (an index on a large table): no statement timeout,
    // and waiting for another instance's migrations has none either.
    await tx.exec('set local statement_timeout = 0');
    await tx.exec(`select pg_advisory_xact_lock(hashtext('hookprompt:migrate'))`);
    const { rows } = await tx.query<{ version: string }>('select version from schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const pending = all.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) {
      await tx.exec(migration.sql);
      await tx.query('insert into schema_migrations (version) values ($1)', [migration.version]);
    }
    return pending.map((migration) => migration.version);
  });
}
