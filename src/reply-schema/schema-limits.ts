/** The largest reply schema a channel may hold, as compact JSON text in UTF-8. */
export const MAX_SCHEMA_BYTES = 65_536;

/** The deepest nesting of objects and arrays in a reply schema; the schema itself is level 1. */
export const MAX_SCHEMA_DEPTH = 32;

/**
 * Why a reply schema is too large to keep, or undefined when it is within the limits. Compiling
 * a schema costs time and memory that grow with its size, and recursive code (the validator's,
 * `JSON.stringify`) runs out of stack on deep nesting; the depth is measured first, without
 * recursion, so a schema thousands of levels deep is refused before anything walks it.
 */
export function schemaLimitProblem(schema: unknown): string | undefined {
  if (depthOver(schema, MAX_SCHEMA_DEPTH)) {
    return `nests deeper than ${MAX_SCHEMA_DEPTH} levels of objects and arrays`;
  }
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES) {
    return `is too large: its JSON text is over ${MAX_SCHEMA_BYTES.toLocaleString('en')} bytes`;
  }
  return undefined;
}

function depthOver(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const member of Object.values(node)) pending.push([member, depth + 1]);
  }
  return false;
}
