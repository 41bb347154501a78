import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database on the server of `adminUrl`, for one benchmark run; `drop()` removes it. */
export async function createScratchDatabase(
  adminUrl: string,
  label: string,
): Promise<ScratchDatabase> {
  const name = `hookprompt_bench_${label}_${randomBytes(4).toString('hex')}`;
  await withAdmin(adminUrl, (admin) => admin.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      // `with (force)` ends the connections a killed server may have left behind.
      await withAdmin(adminUrl, (admin) =>
        admin.query(`drop database if exists ${name} with (force)`),
      );
    },
  };
}

async function withAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** Runs one statement on `url` on a connection of its own. */
export async function runSql<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<Row[]> {
  return withAdmin(url, async (client) => (await client.query<Row>(text, params)).rows);
}
