/** The small interface every repo runs on: a pool, a transaction, or the embedded database. */
export interface Queryable {
  query<Row = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }>;
}

export interface Transaction extends Queryable {
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Calls `onNotify` for each NOTIFY on `channel`; resolves to an unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
