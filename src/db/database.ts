/** Bounds on one statement; without them the database's defaults apply (see postgres.ts). */
export interface QueryOptions {
  /**
   * An absolute time (`Date.now()` scale): waiting for a connection and running the statement
   * both end by then, with a DatabaseTimeoutError.
   */
  deadline?: number;
  /**
   * The statement commits on its own by `deadline` or never (it names the deadline itself, as
   * storeEventBatch does): its answer is then awaited a moment past the deadline, since a
   * commit made just in time must not be reported as a timeout.
   */
  commitsByDeadline?: boolean;
  /**
   * Prepares the statement once per connection under this name, for statements sent so often
   * that parsing and planning them each time would cost more than running them (PostgreSQL).
   * PostgreSQL then keeps one generic plan for it: not for a statement whose best plan depends
   * on how many rows are queued at the moment (see claimEvents).
   */
  name?: string;
}

/** The small interface every repo runs on: a pool, a transaction, or the embedded database. */
export interface Queryable {
  query<Row = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<{ rows: Row[]; rowCount: number }>;
}

export interface Transaction extends Queryable {
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface TransactionOptions {
  /**
   * An absolute time (`Date.now()` scale) by which the transaction has committed or will never
   * commit: its statements are cancelled at the deadline, and a COMMIT the database reaches
   * after it fails (migrations/0006). The promise settles shortly after the deadline at the latest.
   */
  deadline?: number;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Calls `onNotify` for each NOTIFY on `channel`; resolves to an unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A statement or transaction that did not finish by its deadline; nothing of it was committed. */
export class DatabaseTimeoutError extends Error {
  override name = 'DatabaseTimeoutError';
  readonly code = 'DATABASE_TIMEOUT';

  constructor(what = 'the database did not answer in time') {
    super(what);
  }
}
