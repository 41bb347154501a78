import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/** A JSON Schema that could not be compiled; `message` says what is wrong with it. */
export class SchemaError extends Error {
  override name = 'SchemaError';
}

/*
 * This module runs in the schema checkers (pooled-checker.ts), never on the main thread:
 * compiling and validating take time that depends on the schema and the reply.
 *
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

/** The validator of a schema given as JSON text, and whether it was compiled by this call. */
export function replyValidator(schemaText: string): {
  validate: ValidateFunction;
  compiled: boolean;
} {
  const cached = cache.get(schemaText);
  if (cached) {
    // Move to the newest end so a busy channel's schema is not the one evicted.
    cache.delete(schemaText);
    cache.set(schemaText, cached);
    return { validate: cached, compiled: false };
  }
  const validate = compileReplySchema(JSON.parse(schemaText));
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  cache.set(schemaText, validate);
  return { validate, compiled: true };
}

/**
 * The validator of a draft 2020-12 JSON Schema. Unknown keywords and formats are allowed
 * (schemas written for a provider often carry `description`s, titles and vendor keys), but a
 * schema that breaks the meta-schema or names a `$ref` it does not contain is refused.
 * @throws SchemaError naming the problem.
 */
function compileReplySchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' && typeof schema !== 'boolean') {
    throw new SchemaError('a JSON Schema must be an object or a boolean');
  }
  const ajv = new Ajv2020({ strict: false, logger: false, allErrors: false });
  try {
    return ajv.compile(schema as object);
  } catch (error) {
    throw new SchemaError(error instanceof Error ? error.message : String(error));
  }
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
