import { afterEach, describe, expect, it } from 'vitest';
import { FakeAiServer } from '../support/fake-ai-server.js';
import { OtlpCollector } from '../support/otlp-collector.js';
import { startServerProcess } from '../support/server-process.js';
import { createTestDatabase, testDatabaseUrl } from '../support/test-database.js';
import { canRunGuides, guideBlocks, runGuide } from './guide-runner.js';

// docs/guides/tracing.md as a reader runs it: the settings of its step 2 given to a server (the
// collector a stand-in for Jaeger), then its step 3's commands, which print the event's trace id.

const PAGE = 'tracing.md';
const ADMIN_API_KEY = 'tracing-guide-admin-key-0123456789';

let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe.skipIf(!canRunGuides)('the tracing guide, run as a reader runs it', () => {
  it('the page’s settings export the event’s trace, and its commands print that trace’s id', async () => {
    const [collector, ai] = await Promise.all([OtlpCollector.start(), FakeAiServer.start()]);
    cleanups.push(
      () => collector.close(),
      () => ai.close(),
    );
    const jaeger = 'http://localhost:4318';
    const settings = Object.fromEntries(
      [...(guideBlocks(PAGE)[1]?.text ?? '').matchAll(/^([A-Z_]+)=(\S+)$/gm)].map(
        ([, name = '', value = '']) => [name, value.replace(jaeger, collector.url)],
      ),
    );
    expect(settings).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      TRACE_URL_TEMPLATE: 'http://localhost:16686/trace/{trace_id}',
    });
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) cleanups.push(() => database.drop());
    const server = await startServerProcess({
      ...(database ? { DATABASE_URL: database.url as string } : {}),
      ...settings,
      ...ai.env(),
      ADMIN_API_KEY,
    });
    cleanups.push(() => server.stop('SIGKILL'));
    const made = await fetch(`${server.baseUrl}/api/v1/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Traced', template: 'Order {{order.id}}' }),
    });
    const channel = (await made.json()) as { id: string };

    const result = await runGuide(PAGE, {
      variables: { HOOKPROMPT: server.baseUrl, API_KEY: ADMIN_API_KEY, CHANNEL_ID: channel.id },
      // step 1 runs Jaeger with Docker; step 2's lines are settings, given to the server above
      replace: [
        ['docker run -p 16686:16686 -p 4318:4318 jaegertracing/jaeger', ':'],
        [`OTEL_EXPORTER_OTLP_ENDPOINT=${jaeger}`, ':'],
        ['TRACE_URL_TEMPLATE=http://localhost:16686/trace/{trace_id}', ':'],
      ],
    });
    const traceId = result.printed(2).trim().split('\n').at(-1) ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // Stopping exports what the process still holds: the trace is the one printed.
    expect(await server.stop()).toBe(0);
    const bytes = collector.allBytes();
    expect(bytes.includes(Buffer.from(traceId, 'hex'))).toBe(true);
    expect(bytes.includes('event process')).toBe(true);
  }, 180_000);
});
