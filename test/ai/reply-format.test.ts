import { describe, expect, it } from 'vitest';
import {
  aiSettingsInputSchema,
  mergeAiSettings,
  DEFAULT_AI_SETTINGS,
} from '../../src/ai/ai-settings.js';
import { replyProblem } from '../../src/ai/reply-check.js';
import { compileReplySchema, SchemaError } from '../../src/ai/reply-schema.js';

const schema = {
  type: 'object',
  properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
  required: ['total'],
  additionalProperties: false,
};

describe('replyProblem', () => {
  it('accepts any text for text, and anything without a format', () => {
    expect(replyProblem('hello', 'text')).toBeUndefined();
    expect(replyProblem('hello', undefined)).toBeUndefined();
  });

  it('wants a JSON object for json', () => {
    expect(replyProblem('{"a":1}', 'json')).toBeUndefined();
    expect(replyProblem('[1]', 'json')).toBe('the reply is JSON but not an object');
    expect(replyProblem('Sure! {"a":1}', 'json')).toMatch(/^the reply is not JSON \(/);
  });

  it('validates against a 2020-12 schema and names the first error', () => {
    const format = { json_schema: schema };
    expect(replyProblem('{"total": 3, "items": ["a"]}', format)).toBeUndefined();
    expect(replyProblem('{"total": "3"}', format)).toBe('/total must be number');
    expect(replyProblem('{}', format)).toBe("the reply must have required property 'total'");
    expect(replyProblem('{"total": 1, "x": 2}', format)).toBe(
      'the reply must NOT have additional properties (x)',
    );
    expect(replyProblem('not json', format)).toMatch(/^the reply is not JSON/);
  });

  it('understands 2020-12 keywords such as prefixItems', () => {
    const format = { json_schema: { type: 'array', prefixItems: [{ type: 'number' }] } };
    expect(replyProblem('[1, "x"]', format)).toBeUndefined();
    expect(replyProblem('["x"]', format)).toBe('/0 must be number');
  });
});

describe('compileReplySchema', () => {
  it('caches compiled validators by schema text', () => {
    expect(compileReplySchema({ ...schema })).toBe(
      compileReplySchema(JSON.parse(JSON.stringify(schema))),
    );
  });

  it('refuses a schema that does not compile, saying why', () => {
    expect(() => compileReplySchema({ type: 'objekt' })).toThrow(SchemaError);
    expect(() => compileReplySchema({ $ref: '#/$defs/missing' })).toThrow(
      /can't resolve reference/,
    );
  });

  it('lets two schemas share an $id', () => {
    compileReplySchema({ $id: 'https://example.com/reply', type: 'object' });
    expect(() =>
      compileReplySchema({ $id: 'https://example.com/reply', type: 'array' }),
    ).not.toThrow();
  });
});

describe('ai settings', () => {
  it('validates the ranges and names the schema problem', () => {
    const bad = aiSettingsInputSchema.safeParse({
      temperature: 2.5,
      max_tokens: 0,
      history: 51,
      response_format: { json_schema: { type: 'objekt' } },
    });
    expect(bad.success).toBe(false);
    const paths = bad.error?.issues.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'temperature',
        'max_tokens',
        'history',
        'response_format.json_schema',
      ]),
    );
    const schemaIssue = bad.error?.issues.find(
      (i) => i.path.join('.') === 'response_format.json_schema',
    );
    expect(schemaIssue?.message).toMatch(/^is not a usable JSON Schema: .*type/);
    expect(aiSettingsInputSchema.safeParse({ response_format: 'xml' }).success).toBe(false);
    expect(aiSettingsInputSchema.safeParse({ temperatur: 1 }).success).toBe(false);
  });

  it('merges a change member by member; null clears one, or all', () => {
    const first = mergeAiSettings(DEFAULT_AI_SETTINGS, { model: 'm', temperature: 1, history: 3 });
    const second = mergeAiSettings(first, { temperature: null, thread_key: '{{customer.id}}' });
    expect(second).toEqual({
      ...DEFAULT_AI_SETTINGS,
      model: 'm',
      history: 3,
      thread_key: '{{customer.id}}',
    });
    expect(mergeAiSettings(second, { system_prompt: '', thread_key: ' ' })).toMatchObject({
      system_prompt: null,
      thread_key: null,
    });
    expect(mergeAiSettings(second, null)).toEqual(DEFAULT_AI_SETTINGS);
  });
});
