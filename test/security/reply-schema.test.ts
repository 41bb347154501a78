import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, PanelClient, unescapeHtml } from '../panel/panel-client.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, AI_MAX_ATTEMPTS: '2', WORKER_RETRY_BASE_MS: '0' },
});

/**
 * A schema whose JSON nests `levels` objects deep (the outermost object is level 1), as text:
 * `JSON.stringify` itself runs out of stack long before 5,000 levels.
 */
function nestedSchemaText(levels: number): string {
  return `${'{"not":'.repeat(levels - 1)}{"type":"string"}${'}'.repeat(levels - 1)}`;
}
const nestedSchema = (levels: number) => JSON.parse(nestedSchemaText(levels)) as object;

const withSchema = (schema: unknown) => ({ ai: { response_format: { json_schema: schema } } });

describe('saving a reply schema through the API', () => {
  it('refuses one nested deeper than 32 levels, however deep, with 400 naming the field', async () => {
    for (const levels of [33, 5_000]) {
      const res = await driver
        .api('post', '/channels')
        .set('Content-Type', 'application/json')
        .send(
          `{"name": "Deep", "template": "x", "ai": {"response_format": {"json_schema": ${nestedSchemaText(levels)}}}}`,
        );
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toMatch(/^ai\.response_format\.json_schema: .*32 levels/);
    }
    const channel = await driver.createChannel({ name: 'Shallow' });
    const patched = await driver.updateChannel(channel.id, withSchema(nestedSchema(33)));
    expect(patched.status).toBe(400);
    expect(patched.body.detail).toMatch(/^ai\.response_format\.json_schema: .*32 levels/);
  });

  it('refuses one whose JSON text is over 65,536 bytes with 400', async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 2_500 }, (_, n) => [`field_${n}`, { type: 'string' }]),
    );
    const schema = { type: 'object', properties };
    expect(JSON.stringify(schema).length).toBeGreaterThan(70_000);
    const res = await driver
      .api('post', '/channels')
      .send({ name: 'Large', template: 'x', ...withSchema(schema) });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^ai\.response_format\.json_schema: .*65,536 bytes/);
  });

  it('saves one of 32 levels, and one whose pattern has a lookahead', async () => {
    const deep = await driver
      .api('post', '/channels')
      .send({ name: 'Deep enough', template: 'x', ...withSchema(nestedSchema(32)) });
    expect(deep.status).toBe(201);
    const lookahead = { type: 'string', pattern: '^(?=.*\\d)(?!.*\\s)\\w+$' };
    const patterned = await driver
      .api('post', '/channels')
      .send({ name: 'Lookahead', template: 'x', ...withSchema(lookahead) });
    expect(patterned.status).toBe(201);
    expect(patterned.body.ai.response_format).toEqual({ json_schema: lookahead });
  });
});

describe('saving a reply schema in the panel', () => {
  it('shows the nesting limit next to the schema field', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const id = await client.createChannel('Panel deep', 'x');
    const res = await client.form(`/channels/${id}`, {
      name: 'Panel deep',
      template: 'x',
      ai_response_format: 'json_schema',
      ai_json_schema: JSON.stringify(nestedSchema(33)),
    });
    expect(res.status).toBe(400);
    expect(unescapeHtml(res.text)).toMatch(/id="ai_json_schema-error">[^<]*32 levels/);
  });
});

describe('checking replies', () => {
  async function eventOf(schema: unknown) {
    const res = await driver
      .api('post', '/channels')
      .send({ name: 'Checked', template: 'Order {{id}}', ...withSchema(schema) });
    expect(res.status).toBe(201);
    const sent = await driver.sendEvent(res.body.webhook_url as string, { id: 1 });
    return sent.body.event_id as string;
  }
  const stored = async (id: string) =>
    (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;

  it('fails a reply the validator throws on (a recursive schema, a reply 20,000 deep) as reply_invalid', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    ai.defaultReply = { body: chatCompletion(deep) };
    const id = await eventOf({ type: 'array', items: { $ref: '#' } });
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await stored(id)).error).toMatch(/^reply_invalid: /);
    await worker.runOnce();
    const failed = await stored(id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 2, reply: null });
    expect(failed.error).toMatch(/^reply_invalid: .*Gave up after 2 attempts\.$/);
  });

  it('still checks a pattern with a lookahead', async () => {
    ai.enqueue({ body: chatCompletion('"no digit"') }, { body: chatCompletion('"abc1"') });
    const id = await eventOf({ type: 'string', pattern: '^(?=.*\\d)(?!.*\\s)\\w+$' });
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect((await stored(id)).error).toBe(
      'reply_invalid: the reply must match pattern "^(?=.*\\d)(?!.*\\s)\\w+$"',
    );
    await worker.runOnce();
    expect(await stored(id)).toMatchObject({ status: 'replied', reply: '"abc1"' });
  });
});
