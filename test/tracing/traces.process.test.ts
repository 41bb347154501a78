import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { chatCompletion, FakeAiServer, fakeReplyTo } from '../support/fake-ai-server.js';
import { OtlpCollector, SPAN_KIND, type CollectedSpan } from '../support/otlp-collector.js';
import { ReplyReceiver } from '../support/reply-receiver.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { ToolEndpoint } from '../support/tool-servers.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const ADMIN_API_KEY = 'tracing-test-admin-key-0123456789';
/** In the payload, so in the prompt and the reply: it must appear in no span. */
const PERSONAL = 'jane.doe.tracing@example.com';

let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** The loopback fakes one traced event needs: the collector, the model and the reply URL. */
async function startFakes() {
  const [collector, ai, receiver] = await Promise.all([
    OtlpCollector.start(),
    FakeAiServer.start(),
    ReplyReceiver.start(),
  ]);
  cleanups.push(
    () => collector.close(),
    () => ai.close(),
    () => receiver.close(),
  );
  return { collector, ai, receiver };
}

async function startProcess(env: Record<string, string>): Promise<ServerProcess> {
  const started = await startServerProcess({
    ADMIN_API_KEY,
    DELIVERY_ALLOW_PRIVATE: 'true',
    ...env,
  });
  cleanups.push(() => started.stop('SIGKILL'));
  return started;
}

async function api(web: ServerProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${web.baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * A channel delivering its replies to the receiver, one webhook sent to it with the sender's
 * traceparent (when given), and the event once it is replied and its reply delivered.
 */
async function sendTracedEvent(
  web: ServerProcess,
  receiver: ReplyReceiver,
  traceparent: string | undefined,
) {
  const channel = await api(web, 'POST', '/channels', {
    name: 'Traced',
    template: 'Order {{order.id}} for {{customer.email}}',
    reply_delivery: { url: receiver.url('/traced') },
  });
  expect(channel.status).toBe(201);
  const webhookUrl = channel.body.webhook_url as string;
  const hook = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({ order: { id: 7 }, customer: { email: PERSONAL } }),
  });
  expect(hook.status).toBe(200);
  const { event_id: eventId } = (await hook.json()) as { event_id: string };
  const event = await eventually(
    async () => {
      const res = await api(web, 'GET', `/events/${eventId}`);
      const delivery = res.body.delivery as { status: string } | null;
      return res.body.status === 'replied' && delivery?.status === 'delivered'
        ? res.body
        : undefined;
    },
    { what: 'the event replied and its reply delivered', timeoutMs: 60_000 },
  );
  return {
    event,
    channelId: channel.body.id as string,
    token: webhookUrl.slice(webhookUrl.lastIndexOf('/') + 1),
  };
}

/** The one span of that name, after checking there is exactly one. */
function only(spans: CollectedSpan[], name: string): CollectedSpan {
  const named = spans.filter((span) => span.name === name);
  expect(named.map((span) => span.name)).toEqual([name]);
  return named[0] as CollectedSpan;
}

/** Processes start, answer and stop on a machine that may be busy. */
const PROCESS_TEST = { timeout: 180_000 };

describe.skipIf(!testDatabaseUrl)(
  'one event traced across a web and a worker process on PostgreSQL (needs TEST_DATABASE_URL)',
  PROCESS_TEST,
  () => {
    let database: TestDatabase;

    it('exports its four spans in the sender’s trace, parented as the contract says, with nothing personal or secret', async () => {
      database = await createTestDatabase();
      cleanups.push(() => database.drop());
      const { collector, ai, receiver } = await startFakes();
      const tracing = {
        DATABASE_URL: database.url as string,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      };
      const [web, worker] = await Promise.all([
        startProcess({ ...tracing, ROLE: 'web' }),
        startProcess({ ...tracing, ROLE: 'worker', ...ai.env() }),
      ]);
      const senderTrace = randomBytes(16).toString('hex');
      const senderSpan = randomBytes(8).toString('hex');

      const { event, channelId, token } = await sendTracedEvent(
        web,
        receiver,
        `00-${senderTrace}-${senderSpan}-01`,
      );
      expect(event.trace_id).toBe(senderTrace);
      // Stopping exports what each process still holds.
      expect(await Promise.all([web.stop(), worker.stop()])).toEqual([0, 0]);

      const spans = collector.spans;
      expect(spans.every((span) => span.traceId === senderTrace)).toBe(true);
      expect(spans.every((span) => span.serviceName === 'hookprompt')).toBe(true);
      const receive = only(spans, 'webhook receive');
      const process = only(spans, 'event process');
      const chat = only(spans, 'chat fake-model');
      const delivery = only(spans, 'delivery send');

      expect(receive).toMatchObject({ parentSpanId: senderSpan, kind: SPAN_KIND.server });
      expect(receive.attributes).toMatchObject({
        'hookprompt.channel_id': channelId,
        'hookprompt.event_id': event.id,
        'http.response.status_code': 200,
      });
      expect(process).toMatchObject({ parentSpanId: receive.spanId });
      expect(process.attributes).toMatchObject({
        'hookprompt.event_id': event.id,
        'hookprompt.event_outcome': 'replied',
      });
      expect(chat).toMatchObject({ parentSpanId: process.spanId, kind: SPAN_KIND.client });
      expect(chat.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'fake-model',
        'gen_ai.response.model': 'fake-model',
        'gen_ai.usage.input_tokens': 1,
        'gen_ai.usage.output_tokens': 1,
      });
      expect(delivery).toMatchObject({ parentSpanId: receive.spanId, kind: SPAN_KIND.client });
      expect(delivery.attributes).toMatchObject({
        'hookprompt.destination_kind': 'webhook',
        'http.response.status_code': 200,
      });

      const exported = JSON.stringify(spans);
      const prompt = `Order 7 for ${PERSONAL}`;
      expect(event.prompt).toBe(prompt);
      for (const secret of [PERSONAL, prompt, fakeReplyTo(prompt), token, ADMIN_API_KEY])
        expect(exported).not.toContain(secret);
    });
  },
);

describe('one event traced in a single process (ROLE=all)', PROCESS_TEST, () => {
  it('exports OTLP/HTTP protobuf by default: the four spans in one new trace, the event naming it', async () => {
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const { collector, ai, receiver } = await startFakes();
    const all = await startProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
      OTEL_SERVICE_NAME: 'hookprompt-traced',
      ...ai.env(),
    });

    const { event, token } = await sendTracedEvent(all, receiver, undefined);
    expect(event.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(await all.stop()).toBe(0);

    expect(collector.exports.length).toBeGreaterThan(0);
    expect(collector.exports.every((e) => e.contentType === 'application/x-protobuf')).toBe(true);
    const bytes = collector.allBytes();
    // Protobuf keeps strings as UTF-8 and ids as their 16 or 8 bytes.
    for (const name of ['webhook receive', 'event process', 'chat fake-model', 'delivery send'])
      expect(bytes.includes(name)).toBe(true);
    expect(bytes.includes('hookprompt-traced')).toBe(true);
    expect(bytes.includes(Buffer.from(event.trace_id as string, 'hex'))).toBe(true);
    for (const secret of [PERSONAL, token, ADMIN_API_KEY])
      expect(bytes.includes(secret)).toBe(false);
  });

  it('exports one execute_tool span per tool call, under the attempt', async () => {
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const { collector, ai } = await startFakes();
    const tool = await ToolEndpoint.start();
    cleanups.push(() => tool.close());
    const all = await startProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      TOOLS_ALLOW_PRIVATE: 'true',
      ...ai.env(),
    });
    const schema = { type: 'object', properties: { order: { type: 'string' } } };
    const added = await api(all, 'POST', '/tools', {
      name: 'lookup',
      kind: 'http',
      description: 'The status of an order',
      url: `${tool.baseUrl}/orders`,
      input_schema: schema,
    });
    expect(added.status).toBe(201);
    const channel = await api(all, 'POST', '/channels', {
      name: 'With tools',
      template: 'Order {{order.id}}',
      ai: { tools: ['lookup'] },
    });
    const asks = chatCompletion(null);
    Object.assign(asks.choices[0]?.message ?? {}, {
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"order":"7"}' } },
        { id: 'c2', type: 'function', function: { name: 'nope', arguments: '{}' } },
      ],
    });
    ai.enqueue({ body: asks }, { body: chatCompletion('Shipped.') });
    const hook = await fetch(channel.body.webhook_url as string, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order: { id: 7 } }),
    });
    const { event_id: eventId } = (await hook.json()) as { event_id: string };
    await eventually(
      async () => (await api(all, 'GET', `/events/${eventId}`)).body.status === 'replied',
      { what: 'the event replied', timeoutMs: 60_000 },
    );
    expect(await all.stop()).toBe(0);

    const process = only(collector.spans, 'event process');
    const lookup = only(collector.spans, 'execute_tool lookup');
    const refused = only(collector.spans, 'execute_tool nope');
    expect(lookup).toMatchObject({ parentSpanId: process.spanId, kind: SPAN_KIND.client });
    expect(lookup.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
    });
    expect(refused).toMatchObject({ parentSpanId: process.spanId });
    expect(refused.attributes).toMatchObject({ 'error.type': 'refused' });
  });

  it('records the payload, prompt and reply only with OTEL_RECORD_CONTENT=true, never the token or a key', async () => {
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const { collector, ai, receiver } = await startFakes();
    const all = await startProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_RECORD_CONTENT: 'true',
      ...ai.env(),
    });

    const { event, token } = await sendTracedEvent(all, receiver, undefined);
    expect(await all.stop()).toBe(0);

    const prompt = `Order 7 for ${PERSONAL}`;
    const receive = only(collector.spans, 'webhook receive');
    expect(receive.parentSpanId).toBeUndefined();
    expect(JSON.parse(String(receive.attributes['hookprompt.payload']))).toEqual({
      order: { id: 7 },
      customer: { email: PERSONAL },
    });
    const chat = only(collector.spans, 'chat fake-model');
    expect(JSON.parse(String(chat.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: prompt }] },
    ]);
    expect(JSON.parse(String(chat.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: fakeReplyTo(prompt) }] },
    ]);
    expect(collector.spans.every((span) => span.traceId === event.trace_id)).toBe(true);
    const exported = JSON.stringify(collector.spans);
    for (const secret of [token, ADMIN_API_KEY]) expect(exported).not.toContain(secret);
  });

  it('follows a sender that does not sample: no span exported, no trace id on the event', async () => {
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const { collector, ai, receiver } = await startFakes();
    const all = await startProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...ai.env(),
    });
    const unsampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
    const { event } = await sendTracedEvent(all, receiver, unsampled);
    expect(event.trace_id).toBeNull();
    expect(await all.stop()).toBe(0);
    expect(collector.spans).toEqual([]);
  });

  it('keeps no trace without an endpoint, whatever the sender sends', async () => {
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const { ai, receiver } = await startFakes();
    const all = await startProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      ...ai.env(),
    });
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const { event } = await sendTracedEvent(all, receiver, traceparent);
    expect(event.trace_id).toBeNull();
  });
});
