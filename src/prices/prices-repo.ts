import type { Queryable } from '../db/database.js';

/** A workspace's own price for one model, as stored. */
export interface PriceRow {
  model: string;
  input_per_mtok: number;
  output_per_mtok: number;
  /** Left out when the workspace sets none. */
  cache_read_per_mtok?: number;
  cache_write_per_mtok?: number;
}

// Exact decimals in the table; float8 in answers, where they are numbers.
const COLUMNS = `model, input_per_mtok::float8 as input_per_mtok,
  output_per_mtok::float8 as output_per_mtok, cache_read_per_mtok::float8 as cache_read_per_mtok,
  cache_write_per_mtok::float8 as cache_write_per_mtok`;

type StoredPrice = Omit<PriceRow, 'cache_read_per_mtok' | 'cache_write_per_mtok'> & {
  cache_read_per_mtok: number | null;
  cache_write_per_mtok: number | null;
};

/** A stored price as the API shows it: the cache prices only when set. */
function priceOf({ cache_read_per_mtok, cache_write_per_mtok, ...price }: StoredPrice): PriceRow {
  return {
    ...price,
    ...(cache_read_per_mtok === null ? {} : { cache_read_per_mtok }),
    ...(cache_write_per_mtok === null ? {} : { cache_write_per_mtok }),
  };
}

export async function listPrices(db: Queryable, workspaceId: string): Promise<PriceRow[]> {
  const { rows } = await db.query<StoredPrice>(
    `select ${COLUMNS} from workspace_prices where workspace_id = $1 order by model`,
    [workspaceId],
  );
  return rows.map(priceOf);
}

export async function upsertPrice(
  db: Queryable,
  workspaceId: string,
  price: PriceRow,
): Promise<PriceRow> {
  const { rows } = await db.query<StoredPrice>(
    `insert into workspace_prices (workspace_id, model, input_per_mtok, output_per_mtok,
       cache_read_per_mtok, cache_write_per_mtok)
     values ($1, $2, $3::numeric, $4::numeric, $5::numeric, $6::numeric)
     on conflict (workspace_id, model) do update set
       input_per_mtok = excluded.input_per_mtok,
       output_per_mtok = excluded.output_per_mtok,
       cache_read_per_mtok = excluded.cache_read_per_mtok,
       cache_write_per_mtok = excluded.cache_write_per_mtok,
       updated_at = now()
     returning ${COLUMNS}`,
    [
      workspaceId,
      price.model,
      price.input_per_mtok,
      price.output_per_mtok,
      price.cache_read_per_mtok ?? null,
      price.cache_write_per_mtok ?? null,
    ],
  );
  return priceOf(rows[0] as StoredPrice);
}

/** @returns false when the workspace had no price of its own for the model. */
export async function deletePrice(
  db: Queryable,
  workspaceId: string,
  model: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `delete from workspace_prices where workspace_id = $1 and model = $2`,
    [workspaceId, model],
  );
  return rowCount === 1;
}
