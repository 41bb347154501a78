import { MAX_IMAGES } from '../ai/ai-settings.js';
import { parseConditionPath } from '../conditions/condition-paths.js';
import { resolvePath, type JsonValue } from '../template/index.js';

/** One image a payload names: where it was found, and its URL (http, https or a data URL). */
export interface ImageSource {
  /** The channel's path; `payload.<path>[i]` for the i-th value of a list. */
  path: string;
  url: string;
}

/** A data URL of an image: `data:image/<subtype>[;params];base64,<data>`. */
export const DATA_URL = /^data:(image\/[a-z0-9.+-]+)((?:;[^;,]*)*);base64,/i;

/** Whether a payload value is an image the worker can fetch or decode: the rest is left out. */
function isImageUrl(value: JsonValue | undefined): value is string {
  return typeof value === 'string' && (/^https?:\/\//i.test(value) || DATA_URL.test(value));
}

/**
 * The images an event sends: the values at the channel's `ai.images` paths that are image URLs
 * (or lists of them), in the order of the paths, at most MAX_IMAGES in all. Other values (absent,
 * null, text, numbers) are left out, so a payload without its image still gets a reply.
 */
export function imageSources(payload: JsonValue, paths: readonly string[]): ImageSource[] {
  const sources: ImageSource[] = [];
  for (const path of paths) {
    const parsed = parseConditionPath(path, ['payload']);
    if (typeof parsed === 'string' || !parsed.placeholder) continue;
    const value = resolvePath(payload, parsed.placeholder);
    if (Array.isArray(value)) {
      (value as JsonValue[]).forEach((item, i) => {
        if (isImageUrl(item)) sources.push({ path: `${path}[${i}]`, url: item });
      });
    } else if (isImageUrl(value)) {
      sources.push({ path, url: value });
    }
    if (sources.length >= MAX_IMAGES) break;
  }
  return sources.slice(0, MAX_IMAGES);
}

/** Paths the channel editor offers at most (a payload may hold many URLs). */
const MAX_OFFERED = 50;

/**
 * The `payload.<path>`s of a payload whose values are image URLs or lists holding some: what the
 * channel editor offers for `ai.images`, read from the channel's last payload. Document order.
 */
export function imagePathsIn(payload: JsonValue): string[] {
  const found: string[] = [];
  const walk = (value: JsonValue, path: string, depth: number) => {
    if (found.length >= MAX_OFFERED || depth > 20) return;
    if (isImageUrl(value) || (Array.isArray(value) && value.some((item) => isImageUrl(item)))) {
      found.push(path);
    } else if (value instanceof Map) {
      for (const [key, inner] of value) walk(inner, `${path}.${key}`, depth + 1);
    } else if (Array.isArray(value)) {
      (value as JsonValue[]).forEach((inner, i) => walk(inner, `${path}.${i}`, depth + 1));
    }
  };
  if (payload instanceof Map) {
    for (const [key, value] of payload) walk(value, `payload.${key}`, 1);
  }
  return found;
}
