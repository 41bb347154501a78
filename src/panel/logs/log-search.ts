import type { PayloadCondition } from '../../brain-logs/payload-filter.js';

/** What the Brain Logs search box asks for: payload conditions and free text. */
export interface LogSearch {
  payload: PayloadCondition[];
  /** The words left over, searched in payload, prompt, reply and error. */
  q: string;
}

// `order.status = paid`, `customer.name="Ada Lovelace"`: a path (no spaces, no quotes), `=`, and
// a value, quoted when it holds spaces.
const CONDITION = /([^\s="]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"]*))/g;

/**
 * Reads the search box: every `path = value` is a payload condition (`{{path}}` renders to
 * value), everything else is free text. `order.status = paid refund` is both.
 */
export function parseLogSearch(text: string): LogSearch {
  const payload: PayloadCondition[] = [];
  const rest = text.replace(CONDITION, (match, path: string, quoted?: string, bare?: string) => {
    // Braces cannot be part of a path ({{path}} would not name it): such a pair is text.
    if (path.includes('{') || path.includes('}')) return match;
    const value = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : (bare ?? '');
    const existing = payload.find((condition) => condition.path === path);
    if (existing) existing.value = value;
    else payload.push({ path, value });
    return ' ';
  });
  return { payload, q: rest.replace(/\s+/g, ' ').trim() };
}
