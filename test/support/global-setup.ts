import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { hasChromium, NOT_RUN } from '../e2e/browser.js';
import { migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import { TEMPLATE_DATABASE } from './postgres-template.js';
import { adminQuery, databaseUrl, testDatabaseUrl } from './test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** On PGlite: the file holding a migrated data directory that each test database loads. */
    pgliteSnapshot: string | undefined;
  }
}

/**
 * Migrates once per run, and every test database starts from the result: on PostgreSQL a
 * template database that each test clones, on PGlite a dumped data directory that each test
 * loads (booting from it skips both the cluster's creation and the migrations).
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  sayWhereBrowserTestsAre(project.config.include);
  if (testDatabaseUrl) {
    await createTemplateDatabase();
    project.provide('pgliteSnapshot', undefined);
    return;
  }
  const snapshot = await dumpMigratedPglite();
  project.provide('pgliteSnapshot', snapshot);
  return () => rm(snapshot, { force: true });
}

async function createTemplateDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [
    TEMPLATE_DATABASE,
  ]);
  await client.end();
  if (rowCount) return;

  const building = `${TEMPLATE_DATABASE}_building`;
  await adminQuery(`drop database if exists ${building} with (force)`);
  await adminQuery(`create database ${building}`);
  const db = openPostgres({ url: databaseUrl(building) });
  await migrate(db);
  await db.close();
  await adminQuery(`alter database ${building} rename to ${TEMPLATE_DATABASE}`);
}

async function dumpMigratedPglite(): Promise<string> {
  const db = await openPglite(undefined);
  await migrate(db);
  const file = join(tmpdir(), `${TEMPLATE_DATABASE}_pglite_${process.pid}.tar`);
  await writeFile(file, Buffer.from(await (await db.dump()).arrayBuffer()));
  await db.close();
  return file;
}

// The main suite leaves the browser tests to `npm run test:e2e`; say so, and say when they
// cannot run here at all.
function sayWhereBrowserTestsAre(include: string[]): void {
  if (include.some((pattern) => pattern.startsWith('test/e2e'))) return;
  console.log(hasChromium ? 'browser tests run separately: npm run test:e2e' : NOT_RUN);
}
