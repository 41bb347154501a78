import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import { TEMPLATE_DATABASE } from './postgres-template.js';

/** Set TEST_DATABASE_URL to run the suite on real PostgreSQL; unset, it runs on embedded PGlite. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;

export interface TestDatabase {
  db: Database;
  /** The PostgreSQL URL of this test's own database (undefined on PGlite). */
  url: string | undefined;
  /** A SECRETS_KEY for the apps on this database (they share its secrets). */
  secretsKey: string;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file, migrated by the global setup's work (no state shared
 * between files): on PostgreSQL a clone of the template database, on PGlite a new in-memory
 * instance loaded from the migrated snapshot. `migrated: false` gives an empty one instead.
 */
export async function createTestDatabase({ migrated = true } = {}): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    const db = await openPglite(
      undefined,
      undefined,
      migrated ? await pgliteSnapshot() : undefined,
    );
    return { db, url: undefined, secretsKey: newSecretsKey(), drop: () => db.close() };
  }
  const name = `hookprompt_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}${migrated ? ` template ${TEMPLATE_DATABASE}` : ''}`);
  const url = databaseUrl(name);
  const db = openPostgres({ url, max: 20 });
  return {
    db,
    url,
    secretsKey: newSecretsKey(),
    async drop() {
      // Dropped even when closing fails, e.g. because a test closed the pool itself to see what
      // the service does without its database (`force` ends any connection still open).
      try {
        await db.close();
      } finally {
        await adminQuery(`drop database if exists ${name} with (force)`);
      }
    },
  };
}

let snapshot: Promise<Blob> | undefined;

/** The migrated data directory the global setup dumped, read once per test file. */
function pgliteSnapshot(): Promise<Blob> {
  const file = inject('pgliteSnapshot');
  if (!file) throw new Error('no PGlite snapshot: the global setup runs on PGlite only');
  snapshot ??= readFile(file).then((bytes) => new Blob([bytes]));
  return snapshot;
}

const newSecretsKey = () => randomBytes(32).toString('hex');

export function databaseUrl(name: string): string {
  const url = new URL(testDatabaseUrl as string);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
