import { SecretUnreadableError, type SecretBox } from '../secrets/secret-box.js';
import { SECRET_COLUMNS } from '../secrets/secret-columns.js';
import { storedForm } from '../secrets/secret-values.js';
import type { Database, Queryable, Transaction } from '../db/database.js';
import { migrate } from '../db/migrate.js';

// `npm run admin -- copy-to <DATABASE_URL>`: everything the service stores, from the database its
// configuration names (typically the embedded one) into an empty PostgreSQL database. Tables
// and their order are read from the source's catalogue, so a table a migration adds is copied
// without a change here; both sides are migrated by this build first, so their columns match.

/** Rows per read and write: events can be large, so a batch stays well under memory limits. */
const BATCH_ROWS = 200;

/** One table as the copy sees it. */
export interface CopiedTable {
  name: string;
  /** Columns written: generated ones are computed again by the target. */
  columns: string[];
  primaryKey: string[];
  /** Whether `id` is an identity column, whose sequence must continue after the copied ids. */
  identityId: boolean;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** Why the copy did not start or did not finish; said to the admin as it stands. */
export class CopyRefused extends Error {
  override name = 'CopyRefused';
}

/**
 * Copies every row of every table (the migrations' own bookkeeping aside) in one transaction on
 * the target, secrets sealed again with the target's box; then counts both sides. The source
 * must be migrated; the target must hold no hookprompt rows, and is migrated here. Its triggers
 * are off while rows arrive: a copied event is already finished, and must not queue deliveries
 * or notify workers a second time.
 */
export async function copyDatabase(
  source: Database,
  target: Database,
  boxes: { source: SecretBox; target: SecretBox },
): Promise<TableCount[]> {
  const tables = await tablesInCopyOrder(source);
  // Checked before migrating, so a database in use is refused as it is, not upgraded first.
  await refuseUnlessEmpty(target, tables);
  await migrate(target);
  await target.transaction(async (tx) => {
    // One statement at a time: a transaction is one connection.
    const triggers = async (onOff: 'enable' | 'disable') => {
      for (const { name } of tables)
        await tx.query(`alter table ${quoted(name)} ${onOff} trigger user`);
    };
    await triggers('disable');
    for (const table of tables) await copyTable(source, tx, table, boxes);
    await triggers('enable');
    for (const table of tables.filter((t) => t.identityId)) await continueIds(tx, table.name);
  });
  return countBoth(source, target, tables);
}

/** The tables to copy, each after the tables its foreign keys point at. */
export async function tablesInCopyOrder(db: Queryable): Promise<CopiedTable[]> {
  const { rows } = await db.query<{
    name: string;
    columns: string[];
    primary_key: string[];
    identity_id: boolean;
    refers_to: string[];
  }>(
    `select c.relname as name,
            array(select a.attname::text from pg_attribute a
                  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                    and a.attgenerated = ''
                  order by a.attnum) as columns,
            array(select a.attname::text from pg_index i
                  join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
                  where i.indrelid = c.oid and i.indisprimary
                  order by array_position(i.indkey::int2[], a.attnum)) as primary_key,
            exists(select from pg_attribute a where a.attrelid = c.oid and a.attname = 'id'
                   and a.attidentity <> '') as identity_id,
            array(select distinct f.confrelid::regclass::text from pg_constraint f
                  where f.conrelid = c.oid and f.contype = 'f' and f.confrelid <> c.oid)
              as refers_to
     from pg_class c
     where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
       and not c.relispartition and c.relname <> 'schema_migrations'
     order by c.relname`,
  );
  const ordered: CopiedTable[] = [];
  const placed = new Set<string>();
  let waiting = rows;
  while (waiting.length > 0) {
    const ready = waiting.filter((row) => row.refers_to.every((name) => placed.has(name)));
    if (ready.length === 0) throw new CopyRefused('the tables refer to each other in a circle');
    for (const row of ready) {
      ordered.push({
        name: row.name,
        columns: row.columns,
        primaryKey: row.primary_key,
        identityId: row.identity_id,
      });
      placed.add(row.name);
    }
    waiting = waiting.filter((row) => !placed.has(row.name));
  }
  return ordered;
}

async function refuseUnlessEmpty(target: Queryable, tables: CopiedTable[]): Promise<void> {
  const held: string[] = [];
  for (const { name } of tables) {
    const exists = await target.query<{ found: boolean }>(
      `select to_regclass($1) is not null as found`,
      [`public.${quoted(name)}`],
    );
    if (!exists.rows[0]?.found) continue;
    const rows = await target.query<{ any: boolean }>(
      `select exists(select from ${quoted(name)}) as any`,
    );
    if (rows.rows[0]?.any) held.push(name);
  }
  if (held.length > 0)
    throw new CopyRefused(
      `the target database already holds hookprompt data (in ${held.join(', ')}); ` +
        'copy into a new, empty database',
    );
}

/** Reads the table in primary-key order, a batch at a time, and writes each batch as read. */
async function copyTable(
  source: Queryable,
  target: Transaction,
  table: CopiedTable,
  boxes: { source: SecretBox; target: SecretBox },
): Promise<void> {
  const name = quoted(table.name);
  const columns = table.columns.map(quoted).join(', ');
  const key = table.primaryKey.map(quoted).join(', ');
  const secrets = SECRET_COLUMNS.filter((secret) => secret.table === table.name);
  let after: string | null = null;
  for (;;) {
    // The batch as one JSON text, and the last row's key to continue after.
    const read: { rows: { batch: string | null; last: string | null }[] } = await source.query(
      `with batch as (
         select ${columns} from ${name}
         where $1::json is null
            or (${key}) > (select ${key} from json_populate_record(null::${name}, $1::json))
         order by ${key} limit ${BATCH_ROWS}
       )
       select json_agg(batch order by ${key})::text as batch,
              (select row_to_json(last)::text from (
                 select ${key} from batch order by ${key} desc limit 1) last) as last
       from batch`,
      [after],
    );
    const { batch, last } = read.rows[0] ?? { batch: null, last: null };
    if (batch === null || last === null) return;
    await target.query(
      `insert into ${name} (${columns}) overriding system value
       select ${columns} from json_populate_recordset(null::${name}, $1::json)`,
      [secrets.length ? sealedAgain(table.name, batch, secrets, boxes) : batch],
    );
    after = last;
  }
}

/** The batch with each secret opened with the source's keys and sealed with the target's. */
function sealedAgain(
  table: string,
  batch: string,
  secrets: readonly (typeof SECRET_COLUMNS)[number][],
  boxes: { source: SecretBox; target: SecretBox },
): string {
  const rows = JSON.parse(batch) as Record<string, unknown>[];
  for (const row of rows) {
    for (const { column, kind } of secrets) {
      const stored = row[column];
      if (typeof stored !== 'string') continue;
      try {
        row[column] = storedForm(boxes.target, kind, boxes.source.open(stored));
      } catch (error) {
        if (!(error instanceof SecretUnreadableError)) throw error;
        throw new CopyRefused(`${table}.${column} of row ${String(row.id)}: ${error.message}`);
      }
    }
  }
  return JSON.stringify(rows);
}

/** An identity column's next value comes after the largest id copied. */
async function continueIds(tx: Queryable, table: string): Promise<void> {
  await tx.query(
    `select setval(pg_get_serial_sequence($1, 'id'), max_id)
     from (select max(id) as max_id from ${quoted(table)}) copied where max_id is not null`,
    [table],
  );
}

async function countBoth(
  source: Queryable,
  target: Queryable,
  tables: CopiedTable[],
): Promise<TableCount[]> {
  const count = async (db: Queryable, table: string) => {
    const { rows } = await db.query<{ count: string }>(`select count(*) from ${quoted(table)}`);
    return Number(rows[0]?.count ?? 0);
  };
  const counts: TableCount[] = [];
  for (const { name } of tables)
    counts.push({
      table: name,
      source: await count(source, name),
      target: await count(target, name),
    });
  return counts;
}

/** A name from the catalogue, quoted as an SQL identifier. */
function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
