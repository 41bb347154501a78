import type { Queryable } from '../db/database.js';
import { SEALED_PREFIX } from './secret-box.js';
import type { SecretColumn } from './secret-columns.js';

/** One stored value of a secret column, by its row's id. */
export interface StoredSecret {
  id: string;
  value: string;
}

/** A value to write over what is stored; `was` guards against a change made meanwhile. */
export interface SecretWrite {
  id: string;
  value: string;
  was: string;
}

// The names come from SECRET_COLUMNS, never from input; quoted all the same.
const names = ({ table, column }: SecretColumn) => ({
  table: `"${table}"`,
  column: `"${column}"`,
});

/** Start-up and rotation, one process at a time, on every instance. */
export async function lockStoredSecrets(tx: Queryable): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('hookprompt:stored-secrets'))`);
}

/** Values stored as they are, before there was a key. */
export async function plainValues(db: Queryable, secret: SecretColumn): Promise<StoredSecret[]> {
  const { table, column } = names(secret);
  const { rows } = await db.query<StoredSecret>(
    `select id::text as id, ${column} as value from ${table}
     where ${column} is not null and left(${column}, $1) <> $2 order by id`,
    [SEALED_PREFIX.length, SEALED_PREFIX],
  );
  return rows;
}

/** The sealed value of the newest row that has one: enough to tell whether the keys fit. */
export async function newestSealedValue(
  db: Queryable,
  secret: SecretColumn,
): Promise<StoredSecret | undefined> {
  const { table, column } = names(secret);
  const { rows } = await db.query<StoredSecret>(
    `select id::text as id, ${column} as value from ${table}
     where left(${column}, $1) = $2 order by id desc limit 1`,
    [SEALED_PREFIX.length, SEALED_PREFIX],
  );
  return rows[0];
}

/** Every stored value, locked until the transaction ends. */
export async function allValuesForUpdate(
  tx: Queryable,
  secret: SecretColumn,
): Promise<StoredSecret[]> {
  const { table, column } = names(secret);
  const { rows } = await tx.query<StoredSecret>(
    `select id::text as id, ${column} as value from ${table}
     where ${column} is not null order by id for update`,
  );
  return rows;
}

/** Writes the values in one statement; a row changed since it was read keeps its new value. */
export async function writeValues(
  tx: Queryable,
  secret: SecretColumn,
  writes: SecretWrite[],
): Promise<number> {
  if (writes.length === 0) return 0;
  const { table, column } = names(secret);
  const { rowCount } = await tx.query(
    `update ${table} as t set ${column} = v.value
     from unnest($1::text[], $2::text[], $3::text[]) as v(id, value, was)
     where t.id::text = v.id and t.${column} = v.was`,
    [writes.map((w) => w.id), writes.map((w) => w.value), writes.map((w) => w.was)],
  );
  return rowCount;
}
