export {
  InvalidJsonError,
  JsonNumber,
  isJsonObject,
  type JsonArray,
  type JsonObject,
  type JsonValue,
} from './json-value.js';
export { MAX_DEPTH, checkPayload, parsePayload } from './parse-payload.js';
export { placeholderOf, type Placeholder } from './compile-template.js';
export {
  listPlaceholders,
  missingInTemplates,
  missingPlaceholders,
  resolvePath,
} from './placeholders.js';
export { renderTemplate, renderValue, type ValueTransform } from './render-template.js';
export { toJsonText } from './serialize.js';
export { PayloadPathReader, PayloadPaths, foundValue, type FoundValue } from './payload-paths.js';
