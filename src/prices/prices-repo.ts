import type { Queryable } from '../db/database.js';

/** A workspace's own price for one model, as stored. */
export interface PriceRow {
  model: string;
  input_per_mtok: number;
  output_per_mtok: number;
}

// Exact decimals in the table; float8 in answers, where they are numbers.
const COLUMNS = `model, input_per_mtok::float8 as input_per_mtok, output_per_mtok::float8 as output_per_mtok`;

export async function listPrices(db: Queryable, workspaceId: string): Promise<PriceRow[]> {
  const { rows } = await db.query<PriceRow>(
    `select ${COLUMNS} from workspace_prices where workspace_id = $1 order by model`,
    [workspaceId],
  );
  return rows;
}

export async function upsertPrice(
  db: Queryable,
  workspaceId: string,
  price: PriceRow,
): Promise<PriceRow> {
  const { rows } = await db.query<PriceRow>(
    `insert into workspace_prices (workspace_id, model, input_per_mtok, output_per_mtok)
     values ($1, $2, $3::numeric, $4::numeric)
     on conflict (workspace_id, model) do update set
       input_per_mtok = excluded.input_per_mtok,
       output_per_mtok = excluded.output_per_mtok,
       updated_at = now()
     returning ${COLUMNS}`,
    [workspaceId, price.model, price.input_per_mtok, price.output_per_mtok],
  );
  return rows[0] as PriceRow;
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
