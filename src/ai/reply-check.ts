import { asksForJson, type ResponseFormat } from './ai-settings.js';
import { replySchemas } from '../reply-schema/checker-pool.js';

/** The prefix of the error of an event whose reply did not have the shape its channel asked for. */
export const REPLY_INVALID = 'reply_invalid';

/**
 * Why a reply does not have the shape the channel asked for, or undefined when it does: `json`
 * wants a JSON object, `{json_schema}` JSON valid against the schema (checked in a schema
 * checker off the event loop, within its time limit); text is always fine.
 */
export async function replyProblem(
  reply: string,
  format: ResponseFormat | undefined,
): Promise<string | undefined> {
  if (!asksForJson(format)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(reply);
  } catch (error) {
    return `the reply is not JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (format === 'json') {
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? undefined
      : 'the reply is JSON but not an object';
  }
  return replySchemas.check(JSON.stringify(format.json_schema), reply);
}
