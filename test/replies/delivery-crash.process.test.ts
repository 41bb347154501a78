import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { ReplyReceiver } from '../support/reply-receiver.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const ADMIN_API_KEY = 'delivery-crash-admin-key-012345';

describe.skipIf(!testDatabaseUrl)(
  'a worker killed mid-delivery (needs TEST_DATABASE_URL: two processes on one database)',
  () => {
    const processes: ServerProcess[] = [];
    let database: TestDatabase | undefined;
    let receiver: ReplyReceiver | undefined;

    afterAll(async () => {
      await Promise.all(processes.map((process) => process.stop('SIGKILL')));
      await receiver?.close();
      await database?.drop();
    });

    it('leaves the message to be sent again after its lease, with the same webhook-id and body', async () => {
      database = await createTestDatabase();
      receiver = await ReplyReceiver.start();
      const env = {
        DATABASE_URL: database.url as string,
        ADMIN_API_KEY,
        DELIVERY_ALLOW_PRIVATE: 'true',
        // The lease is the timeout plus a few seconds: short, so the test need not wait long.
        DELIVERY_TIMEOUT_MS: '2000',
        WORKER_POLL_INTERVAL_MS: '200',
      };
      const start = async (role: string) => {
        const started = await startServerProcess({ ...env, ROLE: role });
        processes.push(started);
        return started;
      };
      const web = await start('web');
      const api = (method: string, path: string, body?: unknown) =>
        fetch(`${web.baseUrl}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (res) => (await res.json()) as Record<string, unknown>);
      const channel = await api('POST', '/channels', {
        name: 'Orders',
        template: 'Order {{order.id}}',
      });
      await api('PATCH', `/channels/${channel.id as string}`, {
        reply_delivery: { url: receiver.url() },
      });
      receiver.secrets = [
        (await api('GET', `/channels/${channel.id as string}/reply-secret`)).secret as string,
      ];

      // The receiver holds the first message open; the worker sending it is killed meanwhile.
      receiver.enqueue({ hang: true });
      const first = await start('worker');
      const sent = await fetch(channel.webhook_url as string, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ order: { id: 1 } }),
      });
      const { event_id: eventId } = (await sent.json()) as { event_id: string };
      await eventually(() => receiver?.messages.length === 1, { what: 'the first attempt' });
      await first.stop('SIGKILL');

      await start('worker');
      await eventually(() => (receiver?.messages.length ?? 0) >= 2, {
        timeoutMs: 40_000,
        what: 'the message to be sent again',
      });
      const [before, again] = receiver.messages;
      expect(again?.headers['webhook-id']).toBe(before?.headers['webhook-id']);
      expect(again?.body).toBe(before?.body);
      expect(again?.verifiedWith).toHaveLength(1);
      const event = await eventually(async () => {
        const read = await api('GET', `/events/${eventId}`);
        return (read.delivery as { status: string } | null)?.status === 'delivered'
          ? read
          : undefined;
      });
      expect(event.delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
      expect(receiver.messages).toHaveLength(2);
    }, 90_000);
  },
);
