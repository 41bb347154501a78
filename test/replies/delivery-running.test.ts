import { describe, expect, it } from 'vitest';
import { createDeliveryWorker } from '../../src/deliveries/create-delivery-worker.js';
import { OutboundClient } from '../../src/outbound/outbound-client.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
// The receiver listens on loopback: allowed here.
const { app, driver } = useTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });

/** A channel delivering its replies to `path` on the receiver. */
async function deliveringChannel(path: string) {
  const channel = await driver.createChannel();
  const res = await driver.updateChannel(channel.id, {
    reply_delivery: { url: receiver.url(path) },
  });
  expect(res.status).toBe(200);
  return channel;
}

/** Sends `count` events to the channel and lets the worker answer them: one message each. */
async function finishEvents(channel: { webhook_url: string }, count: number) {
  for (let n = 1; n <= count; n++)
    expect((await driver.sendEvent(channel.webhook_url, { order: { id: n } })).status).toBe(200);
  await app.ctx.worker?.runOnce();
}

const messagesTo = (path: string) => receiver.messages.filter((message) => message.path === path);

const deliveriesOf = async (channelId: string) =>
  (
    await app.ctx.db.query<{ state: string; attempts: number; locked_by: string | null }>(
      `select state, attempts, locked_by from deliveries where channel_id = $1 order by id`,
      [channelId],
    )
  ).rows;

describe('running delivery worker', () => {
  /** claimDeliveries' statement (src/deliveries/queue-claim.ts), told apart by its text. */
  const isClaimStatement = (text: string) => text.includes('for update of deliveries skip locked');

  it('is woken by a notification when a message is created, not by its poll', async () => {
    const worker = createDeliveryWorker(app.ctx, { pollIntervalMs: 600_000 });
    await worker.start();
    try {
      const channel = await deliveringChannel('/woken');
      await finishEvents(channel, 1);
      await eventually(() => messagesTo('/woken').length === 1, { what: 'a message sent' });
    } finally {
      await worker.stop();
    }
  });

  it('gives back messages claimed ahead on stop, and cuts a hanging send short after the grace period', async () => {
    const channel = await deliveringChannel('/stopped');
    await finishEvents(channel, 3);
    receiver.enqueue({ hang: true });
    const worker = createDeliveryWorker(app.ctx, {
      concurrency: 1,
      shutdownGraceMs: 0,
      pollIntervalMs: 600_000,
      // Longer than the test: the hanging send ends only when the worker stops.
      client: new OutboundClient({ timeoutMs: 60_000, allowPrivate: true }),
    });
    await worker.start();
    try {
      await eventually(() => messagesTo('/stopped').length === 1, { what: 'a hanging send' });
      // One slot: one message in its send, one claimed ahead beside it, one left in the queue.
      const states = (await deliveriesOf(channel.id)).map((delivery) => delivery.state);
      expect(states.sort()).toEqual(['pending', 'sending', 'sending']);
    } finally {
      await worker.stop();
    }
    expect(await deliveriesOf(channel.id)).toEqual([
      { state: 'pending', attempts: 0, locked_by: null },
      { state: 'pending', attempts: 0, locked_by: null },
      { state: 'pending', attempts: 0, locked_by: null },
    ]);

    // Due at once: the next run sends all three, the cut one again with the same webhook-id.
    expect(await createDeliveryWorker(app.ctx).runOnce()).toBe(3);
    const sent = messagesTo('/stopped');
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((message) => message.headers['webhook-id'])).size).toBe(3);
  });

  it('gives back a message claimed while it is stopping, unsent', async () => {
    const channel = await deliveringChannel('/claimed-while-stopping');
    await finishEvents(channel, 1);
    // The claim waits until the test has asked the worker to stop.
    let claiming!: () => void;
    const claimSent = new Promise<void>((resolve) => (claiming = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const db = app.ctx.db;
    const gated = new Proxy(db, {
      get(target, property) {
        if (property === 'query')
          return async (...args: Parameters<typeof db.query>) => {
            if (isClaimStatement(args[0])) {
              claiming();
              await gate;
            }
            return db.query(...args);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const worker = createDeliveryWorker(app.ctx, { db: gated, pollIntervalMs: 600_000 });
    await worker.start();
    await claimSent;
    const stopped = worker.stop();
    open();
    await stopped;

    expect(messagesTo('/claimed-while-stopping')).toHaveLength(0);
    expect(await deliveriesOf(channel.id)).toEqual([
      { state: 'pending', attempts: 0, locked_by: null },
    ]);
  });
});
