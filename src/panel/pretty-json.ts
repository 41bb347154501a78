import { JsonNumber, parsePayload, toJsonText, type JsonValue } from '../template/index.js';

/**
 * A payload laid out for reading, two spaces per level. It goes through the template module's
 * lossless parser, so numbers keep the exact text the sender wrote (`1.50` stays `1.50`) and keys
 * their order. Text that is not JSON comes back unchanged: Brain Logs shows what was received.
 */
export function prettyPayload(raw: string): { text: string; isJson: boolean } {
  let value: JsonValue;
  try {
    value = parsePayload(raw);
  } catch {
    return { text: raw, isJson: false };
  }
  return { text: prettyJson(value), isJson: true };
}

export function prettyJson(value: JsonValue): string {
  const out: string[] = [];
  write(value, '', out);
  return out.join('');
}

// Recursion is bounded: parsePayload refuses documents nested deeper than MAX_DEPTH (1000).
function write(value: JsonValue, indent: string, out: string[]): void {
  if (value instanceof Map) {
    if (value.size === 0) return void out.push('{}');
    const inner = indent + '  ';
    out.push('{\n');
    let first = true;
    for (const [key, member] of value) {
      out.push(first ? '' : ',\n', inner, JSON.stringify(key), ': ');
      write(member, inner, out);
      first = false;
    }
    out.push('\n', indent, '}');
  } else if (Array.isArray(value)) {
    if (value.length === 0) return void out.push('[]');
    const inner = indent + '  ';
    out.push('[\n');
    value.forEach((member: JsonValue, i: number) => {
      out.push(i ? ',\n' : '', inner);
      write(member, inner, out);
    });
    out.push('\n', indent, ']');
  } else {
    out.push(value instanceof JsonNumber ? value.text : toJsonText(value));
  }
}
