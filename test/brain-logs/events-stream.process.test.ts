import { describe, expect, it } from 'vitest';
import type { EventJson } from '../../src/events/event-object.js';
import { useTestApp } from '../support/harness.js';
import { startServerProcess } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

// The live tail of one instance shows what another instance stored (the in-process behaviours
// of the stream are in events-stream.test.ts).
describe.skipIf(!testDatabaseUrl)('GET /api/v1/events/stream across instances (PostgreSQL)', () => {
  const { app, driver } = useTestApp();

  it('sends an event another process stored', async () => {
    const orders = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
    const client = await SseClient.open(
      `${app.baseUrl}/api/v1/events/stream?channel_id=${orders.id}`,
      { Authorization: `Bearer ${TEST_ADMIN_KEY}` },
    );
    const other = await startServerProcess({
      DATABASE_URL: app.database.url as string,
      SECRETS_KEY: app.database.secretsKey,
      ROLE: 'web',
    });
    try {
      const token = new URL(orders.webhook_url).pathname;
      const res = await fetch(`${other.baseUrl}${token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"order":{"id":"from-elsewhere"}}',
      });
      expect(res.status).toBe(200);
      const { event_id: id } = (await res.json()) as { event_id: string };
      const message = await client.waitFor((m) => {
        const event = JSON.parse(m.data) as EventJson;
        return event.id === id && event.status === 'pending';
      });
      expect(JSON.parse(message.data).payload).toBe('{"order":{"id":"from-elsewhere"}}');
    } finally {
      client.close();
      await other.stop('SIGKILL');
    }
  }, 60_000);
});
