import { PGlite, types } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { lockDataDir } from './data-dir-lock.js';
import type { Database, Transaction } from './database.js';
import { keepOwnerOnly, OwnerOnlyNodeFS } from './owner-only-files.js';

export interface PgliteDatabase extends Database {
  /** The whole data directory as one uncompressed tarball (what `snapshot` takes back). */
  dump(): Promise<Blob>;
}

/**
 * The embedded database: PostgreSQL compiled to WebAssembly, in-process.
 * `dataDir` undefined keeps everything in memory. One process at a time may open a data directory:
 * two would each write the files as if alone, so a second one fails here (DataDirInUseError).
 * The data directory and every file in it are the service's user's alone (owner-only-files.ts).
 * `snapshot`, a data directory from `dump()`, starts an in-memory database from it
 * instead of from an empty cluster (the tests' migrated database, made once per run).
 */
export async function openPglite(
  dataDir: string | undefined,
  onError?: (error: Error) => void,
  snapshot?: Blob,
): Promise<PgliteDatabase> {
  let unlock = async () => {};
  if (dataDir) {
    await keepOwnerOnly(dataDir);
    unlock = await lockDataDir(dataDir, (error) => onError?.(error));
  }
  const db = await PGlite.create({
    fs: dataDir ? new OwnerOnlyNodeFS(dataDir) : undefined,
    loadDataDir: snapshot,
    parsers: { [types.INT8]: (value: string) => value },
    // Brain Logs free-text search indexes trigrams (migration 0010).
    extensions: { pg_trgm },
  }).catch(async (error: unknown) => {
    await unlock();
    throw error;
  });

  const run = async <Row>(
    target: Pick<PGlite, 'query'>,
    text: string,
    params?: readonly unknown[],
  ) => {
    const result = await target.query<Row>(text, params as unknown[] | undefined);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  };

  return {
    kind: 'pglite',
    dump: () => db.dumpDataDir('none'),
    query: (text, params) => run(db, text, params),
    transaction: (work) =>
      db.transaction((t) => {
        const tx: Transaction = {
          query: (text, params) => run(t, text, params),
          exec: async (sql) => void (await t.exec(sql)),
        };
        return work(tx);
      }),
    async exec(sql) {
      await db.exec(sql);
    },
    async listen(channel, onNotify) {
      const unsubscribe = await db.listen(channel, onNotify);
      // Closing the database ends its listeners; unsubscribing afterwards would throw.
      return async () => {
        if (!db.closed) await unsubscribe();
      };
    },
    async close() {
      try {
        await db.close();
      } finally {
        await unlock();
      }
    },
  };
}
