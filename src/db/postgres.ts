import pg from 'pg';
import type { Database, Transaction } from './database.js';

// Keep int8 as text (pg's default) and make it explicit: ids are exposed as strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => value);

export interface PostgresOptions {
  url: string;
  max?: number;
  onError?: (error: Error) => void;
}

export function openPostgres({ url, max = 10, onError }: PostgresOptions): Database {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', (error) => onError?.(error));

  const run = async <Row>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]) => {
    const result = await client.query(text, params as unknown[] | undefined);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  };

  return {
    kind: 'postgres',
    query: (text, params) => run(pool, text, params),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const tx: Transaction = {
          query: (text, params) => run(client, text, params),
          exec: async (sql) => void (await client.query(sql)),
        };
        const result = await work(tx);
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async listen(channel, onNotify) {
      // LISTEN needs a connection of its own for as long as it listens.
      const client = await pool.connect();
      const handler = (message: pg.Notification) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      };
      client.on('notification', handler);
      await client.query(`listen ${pg.escapeIdentifier(channel)}`);
      return async () => {
        client.off('notification', handler);
        await client.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
        client.release();
      };
    },
    close: () => pool.end(),
  };
}
