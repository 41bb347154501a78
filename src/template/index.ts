export {
  InvalidJsonError,
  JsonNumber,
  isJsonObject,
  type JsonArray,
  type JsonObject,
  type JsonValue,
} from './json-value.js';
export { MAX_DEPTH, checkPayload, parsePayload } from './parse-payload.js';
export { listPlaceholders, missingInTemplates, missingPlaceholders } from './placeholders.js';
export { renderTemplate } from './render-template.js';
export { toJsonText } from './serialize.js';
