import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/** A JSON Schema that could not be compiled; `message` says what is wrong with it. */
export class SchemaError extends Error {
  override name = 'SchemaError';
}

/*
 * A channel's schema is checked against every structured reply, so compiled validators are
 * kept, keyed by the schema's JSON text (the same text for every event of the channel, as it
 * comes back from the database). The cache is bounded and dropped oldest-first.
 *
 * Each schema gets an Ajv instance of its own: one shared instance would keep every schema it
 * ever compiled (Ajv caches them itself, forever) and would refuse a second schema reusing an
 * `$id` that another channel's schema already registered.
 */
const CACHE_LIMIT = 64;
const cache = new Map<string, ValidateFunction>();

/**
 * The validator of a draft 2020-12 JSON Schema. Unknown keywords and formats are allowed
 * (schemas written for a provider often carry `description`s, titles and vendor keys), but a
 * schema that breaks the meta-schema or names a `$ref` it does not contain is refused.
 * @throws SchemaError naming the problem.
 */
export function compileReplySchema(schema: unknown): ValidateFunction {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached) {
    // Move to the newest end so a busy channel's schema is not the one evicted.
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  if (typeof schema !== 'object' && typeof schema !== 'boolean') {
    throw new SchemaError('a JSON Schema must be an object or a boolean');
  }
  const ajv = new Ajv2020({ strict: false, logger: false, allErrors: false });
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw new SchemaError(error instanceof Error ? error.message : String(error));
  }
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  cache.set(key, validate);
  return validate;
}

/** The first of a validator's errors in words, e.g. `/total must be number`. */
export function firstSchemaError(validate: ValidateFunction): string {
  const error = validate.errors?.[0];
  if (!error) return 'the reply does not match the schema';
  const where = error.instancePath === '' ? 'the reply' : error.instancePath;
  const params =
    error.keyword === 'additionalProperties'
      ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
      : '';
  return `${where} ${error.message ?? 'is invalid'}${params}`;
}
