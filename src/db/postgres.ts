import pg from 'pg';
import {
  DatabaseTimeoutError,
  type Database,
  type QueryOptions,
  type Transaction,
  type TransactionOptions,
} from './database.js';

// Keep int8 as text (pg's default) and make it explicit: ids are exposed as strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => value);

/**
 * Every call to PostgreSQL has a deadline, so that a database that stops answering (paused,
 * unreachable, a lock held) turns into errors within seconds instead of requests that hang.
 * The server cancels a statement after `statementMs`; the client gives up a little later in
 * case the server itself is not running, and then closes that connection. Together they keep
 * an API or panel request that waits on the database within the 10 s a webhook gets: its
 * statement ends by `readMs`, or it never got a connection and ended at `connectMs`.
 */
export const DATABASE_LIMITS = {
  connectMs: 3_000,
  /** Far above any statement the service makes (milliseconds at a million events: docs/scaling.md). */
  statementMs: 7_000,
  /** The client's own limit; past it the connection is closed, whatever the server is doing. */
  readMs: 7_500,
  /** A transaction left open by a stuck process gives its locks back after this. */
  idleInTransactionMs: 60_000,
  /** How long past a transaction's deadline the client still waits for an answer sent before it. */
  answerGraceMs: 500,
  rollbackMs: 1_000,
} as const;

/** setTimeout's largest delay: statements that may take as long as they need (migrations). */
const NO_TIMEOUT = 2 ** 31 - 1;

export interface PostgresOptions {
  url: string;
  max?: number;
  onError?: (error: Error) => void;
}

export function openPostgres({ url, max = 10, onError }: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: DATABASE_LIMITS.connectMs,
    statement_timeout: DATABASE_LIMITS.statementMs,
    query_timeout: DATABASE_LIMITS.readMs,
    idle_in_transaction_session_timeout: DATABASE_LIMITS.idleInTransactionMs,
    // A peer that vanished without closing the connection is noticed by the operating system.
    keepAlive: true,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', (error) => onError?.(error));

  const run = async <Row>(
    client: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[],
    timeoutMs?: number,
    name?: string,
  ) => {
    try {
      // pg reads `query_timeout` per query, though its types do not list it.
      const config = { text, values: params, query_timeout: timeoutMs, name } as pg.QueryConfig;
      const result = await client.query(config);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      if ((error as Error).message === 'Query read timeout') throw new DatabaseTimeoutError();
      throw error;
    }
  };

  /** A pooled connection by `deadline`; one that arrives later goes straight back to the pool. */
  const acquire = (deadline: number | undefined): Promise<pg.PoolClient> => {
    if (deadline === undefined) return pool.connect();
    const left = deadline - Date.now();
    if (left <= 0) return Promise.reject(new DatabaseTimeoutError());
    const connecting = pool.connect();
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new DatabaseTimeoutError('no database connection became free in time'));
      }, left);
      connecting.then(
        (client) => {
          if (late) return client.release();
          clearTimeout(timer);
          resolve(client);
        },
        (error: Error) => {
          if (late) return;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  };

  /**
   * Listens for the loss of a checked-out client's connection until `release`. The pool listens
   * only to idle clients: a connection lost while its statement runs (PostgreSQL killed, say)
   * is an 'error' event on the client that, unheard, would end the process.
   */
  const watchLoss = (client: pg.PoolClient) => {
    const watch = {
      lost: undefined as Error | undefined,
      release(broken?: Error) {
        client.off('error', onLost);
        client.release(broken ?? watch.lost);
      },
    };
    const onLost = (error: Error) => {
      watch.lost = error;
      onError?.(error);
    };
    client.on('error', onLost);
    return watch;
  };

  const queryBy = async <Row>(
    text: string,
    params: readonly unknown[] | undefined,
    { deadline, name, commitsByDeadline }: QueryOptions & { deadline: number },
  ) => {
    const client = await acquire(deadline);
    const watch = watchLoss(client);
    let broken: Error | undefined;
    const grace = commitsByDeadline ? DATABASE_LIMITS.answerGraceMs : 0;
    try {
      return await run<Row>(client, text, params, Math.max(1, deadline - Date.now()) + grace, name);
    } catch (error) {
      // The statement may still be running on the server: this connection is not reused.
      if (error instanceof DatabaseTimeoutError) broken = error;
      throw error;
    } finally {
      watch.release(broken);
    }
  };

  const transaction = async <T>(
    work: (tx: Transaction) => Promise<T>,
    { deadline }: TransactionOptions = {},
  ): Promise<T> => {
    const client = await acquire(deadline);
    const watch = watchLoss(client);
    // A connection whose statement timed out on this side is closed, never reused: the server
    // may still be running the statement, and closing it is what rolls the transaction back.
    let broken: Error | undefined;
    const send = async <Row>(
      text: string,
      params?: readonly unknown[],
      { noTimeout = false, name }: { noTimeout?: boolean; name?: string } = {},
    ) => {
      let timeoutMs = noTimeout ? NO_TIMEOUT : undefined;
      if (deadline !== undefined) {
        const left = deadline - Date.now();
        if (left <= 0) throw new DatabaseTimeoutError();
        timeoutMs = left + DATABASE_LIMITS.answerGraceMs;
      }
      try {
        return await run<Row>(client, text, params, timeoutMs, name);
      } catch (error) {
        if (error instanceof DatabaseTimeoutError) broken = error;
        throw error;
      }
    };
    try {
      await send(deadline === undefined ? 'begin' : beginBy(deadline));
      const tx: Transaction = {
        query: (text, params, options) => send(text, params, { name: options?.name }),
        exec: async (sql) => void (await send(sql, undefined, { noTimeout: true })),
      };
      const result = await work(tx);
      await send('commit');
      return result;
    } catch (error) {
      if (!broken && !watch.lost) {
        await run(client, 'rollback', undefined, DATABASE_LIMITS.rollbackMs).catch(
          (failure: Error) => (broken = failure),
        );
      }
      throw error;
    } finally {
      watch.release(broken);
    }
  };

  const listeners = new Set<() => Promise<void>>();

  return {
    kind: 'postgres',
    query: (text, params, options: QueryOptions = {}) =>
      options.deadline === undefined
        ? run(pool, text, params, undefined, options.name)
        : queryBy(text, params, { ...options, deadline: options.deadline }),
    transaction,
    async exec(sql) {
      await run(pool, sql, undefined, NO_TIMEOUT);
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

/**
 * BEGIN, with the transaction's statements (lock waits included) cancelled by the server at the
 * deadline, and the deadline itself for the commit-time check of migrations/0006. One round trip;
 * every value is a number or a timestamp made here, never input.
 */
function beginBy(deadline: number): string {
  const ms = Math.max(1, deadline - Date.now());
  return `begin; set local statement_timeout = ${ms}; set local lock_timeout = ${ms};
    set local hookprompt.commit_deadline = '${new Date(deadline).toISOString()}'`;
}
