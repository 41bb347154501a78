import { z } from 'zod';
import { TOOL_NAME } from '../ai/ai-settings.js';
import { replySchemas } from '../reply-schema/checker-pool.js';
import { schemaLimitProblem } from '../reply-schema/schema-limits.js';
import { urlTemplateProblem } from './tool-url.js';

export const TOOL_KINDS = ['http', 'mcp'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ToolMethod = (typeof TOOL_METHODS)[number];

export const MAX_TOOL_HEADERS = 20;
export const MAX_ALLOWED_TOOLS = 64;

const name = z.string().regex(TOOL_NAME, 'must be 1 to 48 letters, digits, "-" or "_"');
const description = z.string().min(1, 'must not be empty').max(1024);
const approval = z.enum(['never', 'always']);
const timeoutMs = z.number().int().min(100).max(30_000);

/** Header names are HTTP tokens; the ones the request itself is made of are not the tool's. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'idempotency-key',
]);
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name')
  .refine((header) => !RESERVED_HEADERS.has(header.toLowerCase()), 'is set by the service');
const headers = z
  .record(
    headerName,
    z
      .string()
      .max(8_192)
      .regex(/^[^\r\n\0]*$/, 'must be one line'),
  )
  .refine(
    (all) => Object.keys(all).length <= MAX_TOOL_HEADERS,
    `must hold at most ${MAX_TOOL_HEADERS} headers`,
  )
  .refine(
    (all) => new Set(Object.keys(all).map((h) => h.toLowerCase())).size === Object.keys(all).length,
    'must name each header once',
  );

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2000, 'must be at most 2000 characters long');

/** An `http` tool's URL: its `{{input.<path>}}` placeholders only in its path and query. */
const templatedUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters long')
  .superRefine((url, ctx) => {
    const problem = urlTemplateProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * A JSON Schema of an object, with the caps of reply schemas; compiled in a schema checker off
 * the event loop, so bodies holding one are parsed with parseAsync.
 */
const inputSchema = z.record(z.string(), z.unknown()).superRefine(async (schema, ctx) => {
  const tooLarge = schemaLimitProblem(schema);
  if (tooLarge) return ctx.addIssue({ code: 'custom', message: tooLarge });
  if (schema.type !== 'object') {
    return ctx.addIssue({ code: 'custom', message: 'must describe an object ("type": "object")' });
  }
  const problem = await replySchemas.compile(JSON.stringify(schema));
  if (problem) ctx.addIssue({ code: 'custom', message: `is not a usable JSON Schema: ${problem}` });
});

const allowedTools = z
  .array(z.string().min(1, 'must not be empty').max(128))
  .min(1, "must name at least one of the server's tools")
  .max(MAX_ALLOWED_TOOLS, `must name at most ${MAX_ALLOWED_TOOLS} tools`);

const common = {
  name,
  description,
  approval: approval.optional(),
  safe_in_trials: z.boolean().optional(),
  timeout_ms: timeoutMs.optional(),
  headers: headers.optional(),
};

export const createToolSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...common,
    kind: z.literal('http'),
    url: templatedUrl,
    method: z.enum(TOOL_METHODS).optional(),
    input_schema: inputSchema,
  }),
  z.strictObject({
    ...common,
    kind: z.literal('mcp'),
    url: httpUrl.refine((url) => !url.includes('{{'), 'holds no {{input.…}} placeholders'),
    allowed_tools: allowedTools,
  }),
]);

/**
 * Any member but `kind`; members of the other kind are refused by the service, which knows the
 * tool's kind. `headers: null` clears them; a new `url` without `headers` clears them too.
 */
export const updateToolSchema = z.strictObject({
  name: name.optional(),
  description: description.optional(),
  approval: approval.optional(),
  safe_in_trials: z.boolean().optional(),
  timeout_ms: timeoutMs.optional(),
  headers: headers.nullable().optional(),
  url: templatedUrl.optional(),
  method: z.enum(TOOL_METHODS).optional(),
  input_schema: inputSchema.optional(),
  allowed_tools: allowedTools.optional(),
});

/** `{input}` for an `http` tool (checked against its schema by the service), `{}` for `mcp`. */
export const testToolSchema = z.strictObject({
  input: z.record(z.string(), z.unknown()).optional(),
});

export type CreateTool = z.infer<typeof createToolSchema>;
export type UpdateTool = z.infer<typeof updateToolSchema>;
