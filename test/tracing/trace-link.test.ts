import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/platform/config.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';

const { app, driver } = useTestApp({
  env: { ...ADMIN_ENV, TRACE_URL_TEMPLATE: 'http://jaeger.test/trace/{trace_id}?from=hookprompt' },
});
let client: PanelClient;

beforeAll(async () => {
  client = new PanelClient(app);
  await client.signIn();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** An event of a new channel, as the receiver stored it (tracing is off in this process). */
async function newEvent(): Promise<string> {
  const channel = await driver.createChannel();
  const sent = await driver.sendEvent(channel.webhook_url);
  expect(sent.status).toBe(200);
  return String(sent.body.event_id);
}

describe('an event’s trace in Brain Logs', () => {
  it('links the event page to the trace with TRACE_URL_TEMPLATE, and the API names it', async () => {
    const eventId = await newEvent();
    // As a traced webhook's event is stored (src/hooks/store-event-batch.ts).
    await app.ctx.db.query('update events set trace_id = $2 where id = $1', [eventId, TRACE_ID]);

    const html = (await client.page(`/logs/${eventId}`)).text;
    expect(html).toContain(
      `<a href="http://jaeger.test/trace/${TRACE_ID}?from=hookprompt" rel="noopener"><code>${TRACE_ID}</code></a>`,
    );
    const res = await driver.api('get', `/events/${eventId}`);
    expect(res.body.trace_id).toBe(TRACE_ID);
  });

  it('shows no trace for an event that was not traced', async () => {
    const eventId = await newEvent();
    const html = (await client.page(`/logs/${eventId}`)).text;
    expect(html).not.toContain('event-trace');
    expect((await driver.api('get', `/events/${eventId}`)).body.trace_id).toBeNull();
  });
});

describe('tracing configuration', () => {
  it('sends to the traces endpoint as given, else to the endpoint’s /v1/traces; off without either', () => {
    expect(parseConfig({}).tracing).toMatchObject({
      tracesUrl: undefined,
      protocol: 'http/protobuf',
    });
    expect(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing,
    ).toMatchObject({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'hookprompt' });
    expect(
      parseConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }).tracing,
    ).toMatchObject({ tracesUrl: 'http://traces:4318/custom', protocol: 'http/json' });
  });

  it('refuses gRPC and a TRACE_URL_TEMPLATE without {trace_id}, naming the variable', () => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/,
    );
    expect(() => parseConfig({ TRACE_URL_TEMPLATE: 'http://jaeger.test/trace/' })).toThrow(
      /^TRACE_URL_TEMPLATE must contain \{trace_id\}/,
    );
  });
});
