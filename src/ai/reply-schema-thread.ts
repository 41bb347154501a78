import { parentPort } from 'node:worker_threads';
import { firstSchemaError, replyValidator } from './reply-schema.js';

/** What a schema thread is asked: compile `schema` (JSON text), and check `reply` against it when given. */
export interface SchemaTask {
  schema: string;
  reply?: string;
}

/**
 * What a schema thread answers: `ready` once loaded; `checking` when a reply's check starts
 * (its schema compiled), so the time limit of the check can start then; `problem` to end a
 * task: null when the schema compiles and the reply fits.
 */
export type ThreadMessage =
  { ready: true } | { id: number; checking: true } | { id: number; problem: string | null };

const port = parentPort;
if (!port) throw new Error('reply-schema-thread runs as a worker thread');

port.on('message', ({ id, schema, reply }: SchemaTask & { id: number }) => {
  port.postMessage({ id, problem: answer(id, schema, reply) ?? null } satisfies ThreadMessage);
});
port.postMessage({ ready: true } satisfies ThreadMessage);

function answer(id: number, schema: string, reply: string | undefined): string | undefined {
  let validator: ReturnType<typeof replyValidator>['validate'];
  try {
    validator = replyValidator(schema).validate;
  } catch (error) {
    return reply === undefined
      ? messageOf(error)
      : `the schema does not compile: ${messageOf(error)}`;
  }
  if (reply === undefined) return undefined;
  port?.postMessage({ id, checking: true } satisfies ThreadMessage);
  // A validator may throw (deep recursion, say): the reply could not be checked, so it is not taken.
  try {
    return validator(JSON.parse(reply)) ? undefined : firstSchemaError(validator);
  } catch (error) {
    return `the reply could not be checked: ${messageOf(error)}`;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
