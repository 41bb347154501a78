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

  const run = async <Row>(
    client: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[],
  ) => {
    const result = await client.query(text, params as unknown[] | undefined);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  };

  const listeners = new Set<() => Promise<void>>();

  return {
    kind: 'postgres',
    query: (text, params) => run(pool, text, params),
    async transaction(work) {
      const client = await pool.connect();
      // A checked-out client has no pool listener: without this, losing the connection
      // mid-transaction would be an unhandled 'error' event and end the process.
      let lost: Error | undefined;
      const onLost = (error: Error) => {
        lost = error;
        onError?.(error);
      };
      client.on('error', onLost);
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
        client.off('error', onLost);
        client.release(lost);
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async listen(channel, onNotify) {
      // LISTEN needs a connection of its own for as long as it listens; when that connection
      // is lost it is opened again, and `onNotify('')` tells the listener it may have missed some.
      let client: pg.PoolClient | undefined;
      let closed = false;
      let retryScheduled = false;
      const released = new WeakSet<pg.PoolClient>();
      const handler = (message: pg.Notification) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      };
      // A connection can fail several ways at once (an error event and a failed query): it is
      // given back to the pool once, and one new attempt is scheduled.
      const giveBack = (connection: pg.PoolClient, error?: Error) => {
        if (released.has(connection)) return;
        released.add(connection);
        connection.off('notification', handler);
        if (client === connection) client = undefined;
        connection.release(error);
      };
      const retryLater = () => {
        if (closed || retryScheduled) return;
        retryScheduled = true;
        setTimeout(() => {
          retryScheduled = false;
          void connect();
        }, 1_000).unref();
      };
      const connect = async (): Promise<void> => {
        let connection: pg.PoolClient;
        try {
          connection = await pool.connect();
        } catch (error) {
          onError?.(error as Error);
          return retryLater();
        }
        connection.on('notification', handler);
        connection.on('error', (error) => {
          onError?.(error);
          giveBack(connection, error);
          retryLater();
        });
        try {
          await connection.query(`listen ${pg.escapeIdentifier(channel)}`);
        } catch (error) {
          giveBack(connection, error as Error);
          return retryLater();
        }
        if (closed) return giveBack(connection);
        client = connection;
        onNotify('');
      };
      await connect();
      const unlisten = async () => {
        closed = true;
        listeners.delete(unlisten);
        const current = client;
        if (!current) return;
        await current.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
        giveBack(current);
      };
      listeners.add(unlisten);
      return unlisten;
    },
    // A listening connection stays checked out, and the pool would wait for it forever.
    async close() {
      await Promise.all([...listeners].map((unlisten) => unlisten()));
      await pool.end();
    },
  };
}
