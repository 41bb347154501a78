import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({
  env: {
    DELIVERY_ALLOW_PRIVATE: 'true',
    // two attempts a round: the first, and one retry
    DELIVERY_RETRY_SCHEDULE: '20ms',
    DELIVERY_TIMEOUT_MS: '1000',
  },
});
beforeEach(() => {
  receiver.messages.length = 0;
});

type Delivery = { status: string; attempts: number; last_status: number | null };
type EventBody = { id: string; status: string; delivery: Delivery | null };

async function deliveringChannel(): Promise<ChannelJson> {
  const channel = await driver.createChannel();
  const res = await driver.updateChannel(channel.id, { reply_delivery: { url: receiver.url() } });
  expect(res.status).toBe(200);
  return channel;
}

async function finishedEvent(channel: ChannelJson): Promise<string> {
  const res = await driver.sendEvent(channel.webhook_url);
  expect(res.status).toBe(200);
  await app.ctx.worker?.runOnce();
  return res.body.event_id as string;
}

const eventOf = async (id: string) => (await driver.api('get', `/events/${id}`)).body as EventBody;

function deliveredAs(eventId: string, status: string): Promise<EventBody> {
  return eventually(
    async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = await eventOf(eventId);
      return event.delivery?.status === status ? event : undefined;
    },
    { what: `delivery ${status}` },
  );
}

const redeliver = (id: string) => driver.api('post', `/events/${id}/redeliver`);

describe('POST /api/v1/events/{id}/redeliver', () => {
  it('sends a failed delivery again, with a fresh round of retries, and answers the event', async () => {
    const channel = await deliveringChannel();
    receiver.enqueue({ status: 500 }, { status: 500 }, { status: 503 });
    const eventId = await finishedEvent(channel);
    expect((await deliveredAs(eventId, 'failed')).delivery).toMatchObject({ attempts: 2 });

    const res = await redeliver(eventId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: eventId, status: 'replied' });
    expect(res.body.delivery).toMatchObject({ status: 'pending', attempts: 2 });
    // a whole round again: the 503 is retried, not the end
    const event = await deliveredAs(eventId, 'delivered');
    expect(event.delivery).toMatchObject({ attempts: 4, last_status: 200 });
    expect(new Set(receiver.messages.map((m) => m.headers['webhook-id'])).size).toBe(1);
  });

  it('gives a held delivery a fresh round, sent once delivery is on again', async () => {
    const channel = await deliveringChannel();
    receiver.enqueue({ status: 410 }, { status: 500 });
    const eventId = await finishedEvent(channel);
    await eventually(
      async () => (await app.ctx.deliveryWorker?.runOnce(), receiver.messages.length === 1),
    );
    expect((await eventOf(eventId)).delivery).toMatchObject({ status: 'held', attempts: 1 });

    const res = await redeliver(eventId);
    expect(res.status).toBe(202);
    // still held: delivery stays off until an admin turns it on
    expect(res.body.delivery).toMatchObject({ status: 'held' });
    expect(await app.ctx.deliveryWorker?.runOnce()).toBe(0);

    await driver.updateChannel(channel.id, { reply_delivery: { enabled: true } });
    // the 410's attempt no longer counts: the 500 is retried within the new round
    const event = await deliveredAs(eventId, 'delivered');
    expect(event.delivery).toMatchObject({ attempts: 3, last_status: 200 });
  });

  it('answers 409 when no delivery failed or is held, 404 for an event it cannot see', async () => {
    const channel = await deliveringChannel();
    const delivered = await finishedEvent(channel);
    await deliveredAs(delivered, 'delivered');
    const nothing = await redeliver(delivered);
    expect(nothing.status).toBe(409);
    expect(nothing.body.code).toBe('delivery_not_failed');

    const quiet = await driver.createChannel();
    const undelivered = await finishedEvent(quiet);
    expect((await redeliver(undelivered)).status).toBe(409);

    for (const id of ['999999999', 'abc']) expect((await redeliver(id)).status, id).toBe(404);
    const unauthorised = await request(app.baseUrl).post(`/api/v1/events/${delivered}/redeliver`);
    expect(unauthorised.status).toBe(401);
  });
});

describe('delivery metrics', () => {
  it('counts each attempt by kind and outcome, and times it', async () => {
    const res = await request(app.baseUrl).get('/metrics');
    const value = (sample: string) => {
      const line = res.text.split('\n').find((l) => l.startsWith(`${sample} `));
      return line === undefined ? undefined : Number(line.slice(sample.length + 1));
    };
    // the attempts of the tests above: 500 500 | 503 200, 410 | 500 200, 200
    expect(value('hookprompt_deliveries_total{kind="webhook",outcome="delivered"}')).toBe(3);
    expect(value('hookprompt_deliveries_total{kind="webhook",outcome="retried"}')).toBe(3);
    expect(value('hookprompt_deliveries_total{kind="webhook",outcome="failed"}')).toBe(1);
    expect(value('hookprompt_deliveries_total{kind="webhook",outcome="gone"}')).toBe(1);
    expect(value('hookprompt_delivery_duration_seconds_count{kind="webhook"}')).toBe(8);
    expect(res.text).toMatch(
      /^hookprompt_delivery_duration_seconds_bucket\{.*kind="webhook".*\} 8$/m,
    );
  });
});

// After the metrics' count above, which counts the attempts of the tests before it.
describe('redeliver with destinations', () => {
  it("sends the reply URL's failed message again when the channel also has destinations", async () => {
    const channel = await deliveringChannel();
    const res = await driver.updateChannel(channel.id, {
      destinations: [{ kind: 'webhook', url: receiver.url('/destination') }],
    });
    expect(res.status, res.text).toBe(200);
    // Two attempts each, the reply URL's and the destination's: all refused.
    receiver.enqueue({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const eventId = await finishedEvent(channel);
    await deliveredAs(eventId, 'failed');
    await eventually(
      async () => {
        await app.ctx.deliveryWorker?.runOnce();
        const event = (await driver.api('get', `/events/${eventId}`)).body;
        return event.deliveries?.[0]?.status === 'failed';
      },
      { what: 'the destination message failed' },
    );

    expect((await redeliver(eventId)).status).toBe(202);
    const event = await deliveredAs(eventId, 'delivered');
    await eventually(
      async () => {
        await app.ctx.deliveryWorker?.runOnce();
        const read = (await driver.api('get', `/events/${eventId}`)).body;
        return read.deliveries?.[0]?.status === 'delivered';
      },
      { what: 'the destination message delivered' },
    );
    expect(event.delivery).toMatchObject({ status: 'delivered', last_status: 200 });
  });
});
