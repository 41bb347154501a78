import type { ValidateFunction } from 'ajv/dist/2020.js';
import { generateSync, type JsonSchema } from 'json-schema-faker';
import { firstSchemaError } from './reply-validator.js';

/** Seeds tried one after the other until a sample fits its schema. */
const TRIES = 3;

/** A stand-in's reply has no reason to be large; a schema asking for more is answered with why not. */
const MAX_SAMPLE_CHARS = 256 * 1024;

/**
 * JSON text valid against `schema`, the same for the same seed: what the echo stand-in answers
 * a channel that asks for a schema. The generator does not know every keyword a validator does
 * (`not`, some `pattern`s), so each sample is checked, and the next seed tried when it fails.
 * Runs in a schema checker (pooled-checker.ts), within its time limit.
 */
export function sampleReply(
  schema: unknown,
  validate: ValidateFunction,
  seed: number,
): { sample: string } | { problem: string } {
  let problem = 'no sample could be made';
  for (let tried = 0; tried < TRIES; tried++) {
    try {
      const value = generateSync(schema as JsonSchema, { seed: seed + tried });
      const sample = JSON.stringify(value);
      if (sample.length > MAX_SAMPLE_CHARS) {
        return { problem: `a sample would be longer than ${MAX_SAMPLE_CHARS} characters` };
      }
      if (validate(value)) return { sample };
      problem = `no sample valid against the schema could be made (${firstSchemaError(validate)})`;
    } catch (error) {
      problem = `no sample could be made: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return { problem };
}
