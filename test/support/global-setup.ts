import pg from 'pg';
import { hasChromium, NOT_RUN } from '../e2e/browser.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';
import { TEMPLATE_DATABASE } from './postgres-template.js';
import { adminQuery, databaseUrl, testDatabaseUrl } from './test-database.js';

/** On PostgreSQL, migrate one template database that every test file clones. */
export default async function setup(project: { config: { include: string[] } }): Promise<void> {
  sayWhereBrowserTestsAre(project.config.include);
  if (!testDatabaseUrl) return;
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

// The main suite leaves the browser tests to `npm run test:e2e`; say so, and say when they
// cannot run here at all.
function sayWhereBrowserTestsAre(include: string[]): void {
  if (include.some((pattern) => pattern.startsWith('test/e2e'))) return;
  console.log(hasChromium ? 'browser tests run separately: npm run test:e2e' : NOT_RUN);
}
