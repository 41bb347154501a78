import {
  InvalidJsonError,
  isJsonObject,
  listPlaceholders,
  missingPlaceholders,
  parsePayload,
  renderTemplate,
  type JsonValue,
} from '../../template/index.js';
import { prettyJson } from '../pretty-json.js';

export interface Preview {
  /** Why there is nothing to show (the sample is not a JSON object, ...). */
  problem?: string;
  prompt?: string;
  /** Placeholders the sample lacks: they would render as the empty string. */
  missing: string[];
  /** The rendered prompt is empty or white space: such events end `skipped`, without an AI call. */
  empty: boolean;
}

/** Renders the template against a pasted sample exactly as the worker will render a real event. */
export function previewTemplate(template: string, sample: string): Preview {
  if (sample.trim() === '') {
    return {
      problem: 'Paste a sample payload to see the prompt it produces.',
      missing: [],
      empty: false,
    };
  }
  let payload: JsonValue;
  try {
    payload = parsePayload(sample);
  } catch (error) {
    const reason = error instanceof InvalidJsonError ? error.message : 'it cannot be read';
    return { problem: `The sample is not valid JSON: ${reason}`, missing: [], empty: false };
  }
  if (!isJsonObject(payload)) {
    return {
      problem:
        'The sample must be a JSON object, such as {"order": {"id": 1}}: the receiver refuses anything else.',
      missing: [],
      empty: false,
    };
  }
  const prompt = renderTemplate(template, payload);
  return { prompt, missing: missingPlaceholders(template, payload), empty: prompt.trim() === '' };
}

/**
 * A payload that has every field the template names, each set to "example": a starting point
 * for the preview and for test events. Paths that clash (`a` and `a.b`) keep the first.
 */
export function samplePayloadFor(template: string): string {
  const root = new Map<string, JsonValue>();
  for (const path of listPlaceholders(template)) {
    if (path === '.') continue;
    const keys = path.split('.');
    let node: Map<string, JsonValue> | undefined = root;
    keys.forEach((key, i) => {
      if (!node) return;
      const last = i === keys.length - 1;
      const existing: JsonValue | undefined = node.get(key);
      if (existing === undefined) {
        const created: JsonValue = last ? 'example' : new Map<string, JsonValue>();
        node.set(key, created);
        node = last ? undefined : (created as Map<string, JsonValue>);
      } else {
        node = !last && existing instanceof Map ? (existing as Map<string, JsonValue>) : undefined;
      }
    });
  }
  if (root.size === 0) root.set('message', 'Hello from hookprompt');
  return prettyJson(root);
}
