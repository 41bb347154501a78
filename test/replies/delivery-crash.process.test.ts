import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { testDatabaseUrl } from '../support/test-database.js';

describe.skipIf(!testDatabaseUrl)(
  'a worker killed mid-delivery (needs TEST_DATABASE_URL: two processes on one database)',
  () => {
    const receiver = useReplyReceiver();
    // The API runs in the test process; the workers, which are the point, are processes.
    const { app, driver } = useTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });
    const workers = useFixture(async () => [] as ServerProcess[], {
      stop: (started) => Promise.all(started.map((worker) => worker.stop('SIGKILL'))),
    });
    const startWorker = async () => {
      const worker = await startServerProcess({
        ROLE: 'worker',
        DATABASE_URL: app.database.url as string,
        SECRETS_KEY: app.database.secretsKey,
        DELIVERY_ALLOW_PRIVATE: 'true',
        // The lease is the timeout plus a few seconds: short, so the test need not wait long.
        DELIVERY_TIMEOUT_MS: '2000',
        WORKER_POLL_INTERVAL_MS: '200',
      });
      workers.push(worker);
      return worker;
    };

    it('leaves the message to be sent again after its lease, with the same webhook-id and body', async () => {
      const channel = await driver.createChannel({
        name: 'Orders',
        template: 'Order {{order.id}}',
      });
      await driver
        .api('patch', `/channels/${channel.id}`)
        .send({ reply_delivery: { url: receiver.url() } })
        .expect(200);
      receiver.secrets = [
        (await driver.api('get', `/channels/${channel.id}/reply-secret`)).body.secret as string,
      ];

      // The receiver holds the first message open; the worker sending it is killed meanwhile.
      receiver.enqueue({ hang: true });
      const first = await startWorker();
      const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 1 } });
      const eventId = sent.body.event_id as string;
      await eventually(() => receiver.messages.length === 1, { what: 'the first attempt' });
      await first.stop('SIGKILL');

      await startWorker();
      await eventually(() => receiver.messages.length >= 2, {
        timeoutMs: 40_000,
        what: 'the message to be sent again',
      });
      const [before, again] = receiver.messages;
      expect(again?.headers['webhook-id']).toBe(before?.headers['webhook-id']);
      expect(again?.body).toBe(before?.body);
      expect(again?.verifiedWith).toHaveLength(1);
      const event = await eventually(async () => {
        const read = (await driver.api('get', `/events/${eventId}`)).body as Record<
          string,
          unknown
        >;
        return (read.delivery as { status: string } | null)?.status === 'delivered'
          ? read
          : undefined;
      });
      expect(event.delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
      expect(receiver.messages).toHaveLength(2);
    }, 90_000);
  },
);
