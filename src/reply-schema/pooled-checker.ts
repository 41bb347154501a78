import { parentPort } from 'node:worker_threads';
import { sampleReply } from './reply-sample.js';
import { firstSchemaError, replyValidator } from './reply-validator.js';

/**
 * What a pooled checker is asked: compile `schema` (JSON text), then check `reply` against it
 * when given, or make a sample reply valid against it from `seed` when given.
 */
export interface SchemaTask {
  schema: string;
  reply?: string;
  seed?: number;
}

/** How a task ended: `problem` null when the schema compiles and the reply fits (or the sample was made). */
export interface TaskAnswer {
  problem: string | null;
  sample?: string;
}

/**
 * What a pooled checker answers: `ready` once loaded; `checking` when a reply's check (or a
 * sample) starts, its schema compiled, so the time limit of the check can start then; the
 * task's answer to end it.
 */
export type CheckerMessage =
  { ready: true } | { id: number; checking: true } | ({ id: number } & TaskAnswer);

const port = parentPort;
if (!port) throw new Error('pooled-checker runs as a worker thread of the checker pool');

port.on('message', ({ id, ...task }: SchemaTask & { id: number }) => {
  port.postMessage({ id, ...answer(id, task) } satisfies CheckerMessage);
});
port.postMessage({ ready: true } satisfies CheckerMessage);

function answer(id: number, { schema, reply, seed }: SchemaTask): TaskAnswer {
  let validator: ReturnType<typeof replyValidator>['validate'];
  try {
    validator = replyValidator(schema).validate;
  } catch (error) {
    const problem = messageOf(error);
    return {
      problem:
        reply === undefined && seed === undefined
          ? problem
          : `the schema does not compile: ${problem}`,
    };
  }
  if (reply === undefined && seed === undefined) return { problem: null };
  port?.postMessage({ id, checking: true } satisfies CheckerMessage);
  if (seed !== undefined) {
    const made = sampleReply(JSON.parse(schema), validator, seed);
    return 'sample' in made ? { problem: null, sample: made.sample } : made;
  }
  // A validator may throw (deep recursion, say): the reply could not be checked, so it is not taken.
  try {
    return {
      problem: validator(JSON.parse(reply as string)) ? null : firstSchemaError(validator),
    };
  } catch (error) {
    return { problem: `the reply could not be checked: ${messageOf(error)}` };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
