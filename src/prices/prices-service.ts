import { FREE, type Price, type Prices } from '../ai/call-cost.js';
import { tableModelName, tablePrice } from './price-table.js';
import type { Database } from '../db/database.js';
import { changesBetween, recordAudit } from '../audit/record-audit.js';
import { OTHER_MODEL } from '../metrics/metrics.js';
import { notFound } from '../platform/errors.js';
import * as repo from './prices-repo.js';
import type { PriceInput } from './prices-schemas.js';

export type ModelPrice = repo.PriceRow;

/**
 * A workspace's own prices are read again after this long: a change made in another process
 * takes effect within it (at once in the process that made it).
 */
export const OWN_PRICES_TTL_MS = 5_000;

/**
 * What AI calls cost, by model name: the workspace's own prices (the API's `/prices`), else the
 * price table shipped with the service, else unknown. The echo is free.
 */
export class PricesService {
  private readonly own = new Map<string, { prices: Map<string, Price>; until: number }>();

  constructor(private readonly db: Database) {}

  list(workspaceId: string): Promise<ModelPrice[]> {
    return repo.listPrices(this.db, workspaceId);
  }

  async put(workspaceId: string, model: string, input: PriceInput): Promise<ModelPrice> {
    const saved = await this.db.transaction(async (tx) => {
      const before = (await repo.listPrices(tx, workspaceId)).find((row) => row.model === model);
      const after = await repo.upsertPrice(tx, workspaceId, { model, ...input });
      await recordAudit(tx, {
        workspaceId,
        action: before ? 'price.update' : 'price.create',
        target: { kind: 'price', id: model },
        changes: changesBetween(before, after, Object.keys(input)),
      });
      return after;
    });
    this.own.delete(workspaceId);
    return saved;
  }

  async remove(workspaceId: string, model: string): Promise<void> {
    const deleted = await this.db.transaction(async (tx) => {
      const done = await repo.deletePrice(tx, workspaceId, model);
      if (done)
        await recordAudit(tx, {
          workspaceId,
          action: 'price.delete',
          target: { kind: 'price', id: model },
        });
      return done;
    });
    this.own.delete(workspaceId);
    if (!deleted) throw notFound(`A price of this workspace for ${JSON.stringify(model)}`);
  }

  /**
   * The prices a workspace's calls through a provider of `kind` are costed with (see
   * costOfCall). One query per workspace every OWN_PRICES_TTL_MS at most.
   */
  async pricesFor(workspaceId: string, kind: string): Promise<Prices> {
    if (kind === 'echo') return FREE;
    const own = await this.ownPrices(workspaceId);
    return { priceOf: (model) => (model === null ? undefined : priceOf(own.get(model), model)) };
  }

  /**
   * The `model` label `/metrics` counts a workspace's call under (see ModelLabel): the name of
   * the workspace's own price, else the table's name for the model, else `other`. A count is
   * not worth failing a call's record for: a database error counts it as `other`.
   */
  async modelLabel(workspaceId: string, model: string | null): Promise<string> {
    if (!model) return OTHER_MODEL;
    try {
      if ((await this.ownPrices(workspaceId)).has(model)) return model;
    } catch {
      return OTHER_MODEL;
    }
    return tableModelName(model) ?? OTHER_MODEL;
  }

  private async ownPrices(workspaceId: string): Promise<Map<string, Price>> {
    const now = Date.now();
    const cached = this.own.get(workspaceId);
    if (cached && cached.until > now) return cached.prices;
    const rows = await repo.listPrices(this.db, workspaceId);
    const prices = new Map(rows.map(({ model, ...price }) => [model, price]));
    if (this.own.size >= MAX_WORKSPACES) this.own.delete(this.own.keys().next().value as string);
    this.own.set(workspaceId, { prices, until: now + OWN_PRICES_TTL_MS });
    return prices;
  }
}

const MAX_WORKSPACES = 10_000;

/**
 * The workspace's own price, else the table's; a cache price the workspace's leaves out is the
 * table's for the model (costOfCall prices it as input when neither has one).
 */
function priceOf(own: Price | undefined, model: string): Price | undefined {
  const table = tablePrice(model);
  if (!own) return table;
  return {
    ...own,
    cache_read_per_mtok: own.cache_read_per_mtok ?? table?.cache_read_per_mtok,
    cache_write_per_mtok: own.cache_write_per_mtok ?? table?.cache_write_per_mtok,
  };
}
