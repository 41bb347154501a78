import type { Queryable } from '../db/database.js';
import { AppError } from '../platform/errors.js';
import { lockAndCount } from './workspaces-repo.js';

/**
 * The most of each thing one workspace may hold, by the table that holds them (each has a
 * `workspace_id`). A create past it is `409 limit_reached`. A new limit is one line here and
 * one `requireRoom` call in the transaction that inserts.
 */
export const WORKSPACE_LIMITS = {
  alerts: 100,
  tools: 200,
} as const satisfies Record<string, number>;

export type LimitedTable = keyof typeof WORKSPACE_LIMITS;

export function limitReached(table: LimitedTable): AppError {
  const max = WORKSPACE_LIMITS[table];
  return new AppError(
    409,
    'limit_reached',
    'Limit reached',
    `A workspace holds at most ${max} ${table}; delete one before adding another.`,
    {},
    { limit: max },
  );
}

/**
 * Refuses (`limit_reached`) one more row of `table` when the workspace holds its limit already.
 * Run it in the transaction that inserts: it holds the workspace's lock for that table until
 * the transaction ends, so two creates at once cannot both take the last place.
 */
export async function requireRoom(
  tx: Queryable,
  workspaceId: string,
  table: LimitedTable,
): Promise<void> {
  if ((await lockAndCount(tx, workspaceId, table)) >= WORKSPACE_LIMITS[table])
    throw limitReached(table);
}
