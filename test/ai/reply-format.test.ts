import { describe, expect, it } from 'vitest';
import {
  aiSettingsInputSchema,
  mergeAiSettings,
  DEFAULT_AI_SETTINGS,
} from '../../src/ai/ai-settings.js';
import { replyProblem } from '../../src/ai/reply-check.js';
import { replyValidator, SchemaError } from '../../src/reply-schema/reply-validator.js';

const schema = {
  type: 'object',
  properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
  required: ['total'],
  additionalProperties: false,
};

describe('replyProblem', () => {
  it('accepts any text for text, and anything without a format', async () => {
    expect(await replyProblem('hello', 'text')).toBeUndefined();
    expect(await replyProblem('hello', undefined)).toBeUndefined();
  });

  it('wants a JSON object for json', async () => {
    expect(await replyProblem('{"a":1}', 'json')).toBeUndefined();
    expect(await replyProblem('[1]', 'json')).toBe('the reply is JSON but not an object');
    expect(await replyProblem('Sure! {"a":1}', 'json')).toMatch(/^the reply is not JSON \(/);
  });

  it('validates against a 2020-12 schema and names the first error', async () => {
    const format = { json_schema: schema };
    expect(await replyProblem('{"total": 3, "items": ["a"]}', format)).toBeUndefined();
    expect(await replyProblem('{"total": "3"}', format)).toBe('/total must be number');
    expect(await replyProblem('{}', format)).toBe("the reply must have required property 'total'");
    expect(await replyProblem('{"total": 1, "x": 2}', format)).toBe(
      'the reply must NOT have additional properties (x)',
    );
    expect(await replyProblem('not json', format)).toMatch(/^the reply is not JSON/);
  });

  it('understands 2020-12 keywords such as prefixItems', async () => {
    const format = { json_schema: { type: 'array', prefixItems: [{ type: 'number' }] } };
    expect(await replyProblem('[1, "x"]', format)).toBeUndefined();
    expect(await replyProblem('["x"]', format)).toBe('/0 must be number');
  });
});

describe('replyValidator', () => {
  it('caches compiled validators by schema text', () => {
    const text = JSON.stringify(schema);
    const first = replyValidator(text);
    expect(first.compiled).toBe(true);
    const again = replyValidator(JSON.stringify(JSON.parse(text)));
    expect(again).toEqual({ validate: first.validate, compiled: false });
  });

  it('refuses a schema that does not compile, saying why', () => {
    expect(() => replyValidator('{"type": "objekt"}')).toThrow(SchemaError);
    expect(() => replyValidator('{"$ref": "#/$defs/missing"}')).toThrow(/can't resolve reference/);
  });

  it('lets two schemas share an $id', () => {
    replyValidator('{"$id": "https://example.com/reply", "type": "object"}');
    expect(() =>
      replyValidator('{"$id": "https://example.com/reply", "type": "array"}'),
    ).not.toThrow();
  });
});

describe('ai settings', () => {
  it('validates the ranges and names the schema problem', async () => {
    const bad = await aiSettingsInputSchema.safeParseAsync({
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
