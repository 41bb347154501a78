import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

// No AI settings: the echo stand-in answers.
const { app, driver } = useTestApp();

afterEach(() => app.ctx.db.query('delete from events'));

async function channelWith(response_format: unknown): Promise<ChannelJson> {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Offline', template: 'Order {{order.id}}: {{note}}', ai: { response_format } });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

/** The stored reply of one event sent to the channel and answered by the echo. */
async function replyTo(channel: ChannelJson, payload: unknown): Promise<unknown> {
  const sent = await driver.sendEvent(channel.webhook_url, payload);
  expect(sent.status).toBe(200);
  await createWorker(app.ctx).runOnce();
  const stored = (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
  expect(stored).toMatchObject({ status: 'replied', error: null });
  return JSON.parse(stored.reply as string);
}

/** A strict validator of our own, with formats checked, so a sample must really fit. */
function validOn(schema: object, value: unknown): boolean {
  const ajv = new Ajv2020({ strict: false });
  const formats: Record<string, RegExp> = {
    email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
    'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
    date: /^\d{4}-\d{2}-\d{2}$/,
    uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    uri: /^[a-z][a-z0-9+.-]*:\S+$/i,
  };
  for (const [name, pattern] of Object.entries(formats)) ajv.addFormat(name, pattern);
  return ajv.validate(schema, value);
}

const schemas: Record<string, object> = {
  'required fields': {
    type: 'object',
    properties: {
      summary: { type: 'string', minLength: 3 },
      total: { type: 'number', minimum: 1 },
    },
    required: ['summary', 'total'],
    additionalProperties: false,
  },
  enums: {
    type: 'object',
    properties: {
      priority: { enum: ['low', 'normal', 'high'] },
      team: { type: 'string', enum: ['billing', 'shipping'] },
    },
    required: ['priority', 'team'],
  },
  arrays: {
    type: 'object',
    properties: {
      tags: {
        type: 'array',
        items: { type: 'string' },
        minItems: 2,
        maxItems: 4,
        uniqueItems: true,
      },
      scores: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 10 }, minItems: 1 },
    },
    required: ['tags', 'scores'],
  },
  nested: {
    type: 'object',
    properties: {
      customer: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          address: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              zip: { type: 'string', pattern: '^[0-9]{5}$' },
            },
            required: ['city', 'zip'],
          },
        },
        required: ['name', 'address'],
      },
      lines: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
          required: ['sku', 'qty'],
        },
      },
    },
    required: ['customer', 'lines'],
  },
  formats: {
    type: 'object',
    properties: {
      contact: { type: 'string', format: 'email' },
      at: { type: 'string', format: 'date-time' },
      day: { type: 'string', format: 'date' },
      id: { type: 'string', format: 'uuid' },
      link: { type: 'string', format: 'uri' },
    },
    required: ['contact', 'at', 'day', 'id', 'link'],
  },
  'refs and a top-level array': {
    type: 'array',
    minItems: 1,
    items: { $ref: '#/$defs/line' },
    $defs: {
      line: {
        type: 'object',
        properties: { sku: { type: 'string' }, kind: { const: 'line' } },
        required: ['sku', 'kind'],
      },
    },
  },
};

describe('the echo stand-in with a JSON Schema', () => {
  it.each(Object.entries(schemas))(
    'answers JSON valid against a schema with %s',
    async (_, schema) => {
      const channel = await channelWith({ json_schema: schema });
      const reply = await replyTo(channel, { order: { id: 7 }, note: 'gift wrap' });
      expect(validOn(schema, reply)).toBe(true);
    },
  );

  it('answers the same prompt with the same JSON, and another prompt with other JSON', async () => {
    const channel = await channelWith({ json_schema: schemas.nested });
    const first = await replyTo(channel, { order: { id: 7 }, note: 'gift wrap' });
    const again = await replyTo(channel, { order: { id: 7 }, note: 'gift wrap' });
    expect(again).toEqual(first);
    const others = [];
    for (const id of [8, 9, 10]) others.push(await replyTo(channel, { order: { id }, note: 'x' }));
    expect(others.some((other) => JSON.stringify(other) !== JSON.stringify(first))).toBe(true);
  });
});

describe('the echo stand-in with json and text', () => {
  it('answers json with its report as a JSON object', async () => {
    const channel = await channelWith('json');
    expect(await replyTo(channel, { order: { id: 7 }, note: 'n' })).toEqual({
      echo: 'no AI model configured',
      model: null,
      system_prompt: null,
      history: 0,
      prompt: 'Order 7: n',
    });
  });

  it('answers text as before', async () => {
    const channel = await channelWith('text');
    const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 7 }, note: 'n' });
    await createWorker(app.ctx).runOnce();
    const stored = (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
    expect(stored.reply).toBe('[echo stand-in — no AI model configured] You wrote: Order 7: n');
  });

  it('fails, saying why, when the schema asks for more than a stand-in reply should hold', async () => {
    const channel = await channelWith({
      json_schema: { type: 'array', minItems: 50_000, items: { type: 'string', minLength: 100 } },
    });
    const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 7 }, note: 'n' });
    await createWorker(app.ctx).runOnce();
    const stored = (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
    expect(stored.status).toBe('failed');
    // Made and refused for its size, or stopped at the time limit on a slow machine.
    expect(stored.error).toMatch(
      /^The echo stand-in could not answer in the channel's JSON Schema: (a sample would be longer than 262144 characters|making a sample reply did not finish within 1000 ms)\.$/,
    );
  });

  it('fails, saying why, when no sample fits the schema', async () => {
    const channel = await channelWith({
      json_schema: {
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        not: { required: ['a'] },
      },
    });
    const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 7 }, note: 'n' });
    await createWorker(app.ctx).runOnce();
    const stored = (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
    expect(stored.status).toBe('failed');
    expect(stored.error).toMatch(
      /^The echo stand-in could not answer in the channel's JSON Schema: no sample valid against the schema could be made/,
    );
  });
});
