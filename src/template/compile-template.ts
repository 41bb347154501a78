/** One `{{ ... }}` of a template, with its path already split for lookups. */
export interface Placeholder {
  /** The path as written, without the white space at its ends. */
  readonly path: string;
  /**
   * `whole` is `{{.}}`. `empty` is `{{}}` (or braces holding only white
   * space): it names no field, so it renders as the empty string, like an
   * absent field, and is not reported as a placeholder the template uses.
   */
  readonly kind: 'field' | 'whole' | 'empty';
  /** The dot-separated segments; a key may be empty (`a..b`) and may hold spaces. */
  readonly keys: readonly string[];
  /** Per segment, its array index when it is a canonical one ("0", "12"), else -1. */
  readonly indexes: readonly number[];
}

/** A template cut at its placeholders: `literals` has one more entry than `placeholders`. */
export interface CompiledTemplate {
  readonly literals: readonly string[];
  readonly placeholders: readonly Placeholder[];
}

/*
 * Templates belong to channels and are rendered once per event, so the same
 * few strings come back again and again. The cache is bounded in entries and
 * in template size, and is dropped oldest-first, so it never grows with traffic.
 */
const CACHE_LIMIT = 128;
const CACHEABLE_LENGTH = 16 * 1024;
const cache = new Map<string, CompiledTemplate>();

/**
 * Splits a template into literal text and placeholders.
 *
 * A `}}` closes the nearest `{{` before it; any `{{` it does not close stays
 * literal text. So an unterminated `{{` is kept as written, and `{{{a}}}`
 * renders as `{` + the value of `a` + `}`, which is what one wants when a
 * template writes JSON or braces around a value.
 */
export function compileTemplate(template: string): CompiledTemplate {
  const cached = cache.get(template);
  if (cached !== undefined) return cached;
  const compiled = scan(template);
  if (template.length <= CACHEABLE_LENGTH) {
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(template, compiled);
  }
  return compiled;
}

function scan(template: string): CompiledTemplate {
  const literals: string[] = [];
  const placeholders: Placeholder[] = [];
  let literalStart = 0;
  for (;;) {
    const open = template.indexOf('{{', literalStart);
    if (open < 0) break;
    const close = template.indexOf('}}', open + 2);
    if (close < 0) break;
    const start = template.lastIndexOf('{{', close - 2);
    literals.push(template.slice(literalStart, start));
    placeholders.push(placeholderOf(template.slice(start + 2, close).trim()));
    literalStart = close + 2;
  }
  literals.push(template.slice(literalStart));
  return { literals, placeholders };
}

const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** The placeholder `{{path}}` would be (`path` already trimmed): what conditions read by. */
export function placeholderOf(path: string): Placeholder {
  if (path === '') return { path, kind: 'empty', keys: [], indexes: [] };
  if (path === '.') return { path, kind: 'whole', keys: [], indexes: [] };
  const keys = path.split('.');
  const indexes = keys.map((key) => (CANONICAL_INDEX.test(key) ? Number(key) : -1));
  return { path, kind: 'field', keys, indexes };
}
