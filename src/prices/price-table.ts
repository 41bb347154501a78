import { createRequire } from 'node:module';
import type * as GenAiPrices from '@pydantic/genai-prices';
import type { Price } from '../ai/call-cost.js';

// The table's data is most of a megabyte of code: loaded at its first use, not at every start
// (a process that makes no AI call never needs it).
let table: typeof GenAiPrices | undefined;
const loadTable = () =>
  (table ??= createRequire(import.meta.url)('@pydantic/genai-prices') as typeof GenAiPrices);

/** A price found is kept this long: some models' prices change with the date or the hour. */
const CACHE_MS = 60 * 60 * 1000;
/** Model names are the channels' own: the cache is bounded like any per-name map. */
const CACHE_ENTRIES = 1000;

const cache = new Map<string, { known: Known | undefined; until: number }>();

/** A model the table prices: its price, and the name the table knows it by. */
interface Known {
  price: Price;
  name: string;
}

/**
 * The price of a well-known model from the table shipped with the service (the
 * `@pydantic/genai-prices` package, its bundled data only: nothing is fetched at run time), or
 * undefined when the table does not know the name. A name with a vendor prefix, as OpenRouter
 * and LiteLLM write them (`openai/gpt-4o`), is looked up without it when the whole name is not
 * found. Cached per model name.
 */
export function tablePrice(model: string, now = Date.now()): Price | undefined {
  return known(model, now)?.price;
}

/**
 * The name the table knows `model` by (`gpt-4o-mini` for `gpt-4o-mini-2024-07-18`, `gpt-4o` for
 * `openai/gpt-4o`), or undefined when it does not price it: one of a fixed set of names, however
 * many a channel may write.
 */
export function tableModelName(model: string, now = Date.now()): string | undefined {
  return known(model, now)?.name;
}

function known(model: string, now: number): Known | undefined {
  const cached = cache.get(model);
  if (cached && cached.until > now) return cached.known;
  const slash = model.indexOf('/');
  const found = lookUp(model, now) ?? (slash > 0 ? lookUp(model.slice(slash + 1), now) : undefined);
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(model, { known: found, until: now + CACHE_MS });
  return found;
}

function lookUp(model: string, now: number): Known | undefined {
  if (model === '') return undefined;
  const { calcPrice } = loadTable();
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, {
    timestamp: new Date(now),
  });
  if (!found) return undefined;
  const input = perMillion(found.model_price, 'input_mtok');
  const output = perMillion(found.model_price, 'output_mtok');
  if (input === undefined && output === undefined) return undefined;
  const price: Price = { input_per_mtok: input ?? 0, output_per_mtok: output ?? 0 };
  const cacheRead = perMillion(found.model_price, 'cache_read_mtok');
  const cacheWrite = perMillion(found.model_price, 'cache_write_mtok');
  if (cacheRead !== undefined) price.cache_read_per_mtok = cacheRead;
  if (cacheWrite !== undefined) price.cache_write_per_mtok = cacheWrite;
  return { price, name: found.model.id };
}

/** A flat price; a tiered one (cheaper or dearer past a prompt size) by its first tier. */
function perMillion(prices: GenAiPrices.ModelPrice, key: string): number | undefined {
  const value = prices[key];
  if (typeof value === 'number') return value;
  if (value instanceof loadTable().TieredPrices) return value.base;
  return undefined;
}
