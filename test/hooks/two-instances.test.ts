import { expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';

// Two instances of the service on one database, as behind a load balancer. Instance A has just
// used the channel (so it knows it); every change made through instance B must hold on A at once.
const { app: a, driver: driverA } = useTestApp();
const { app: b, driver: driverB } = useTestApp({ database: () => a.database });

async function channelUsedOnA() {
  const channel = await driverB.createChannel();
  const onA = channel.webhook_url.replace(b.baseUrl, a.baseUrl);
  expect((await driverA.sendEvent(onA)).status).toBe(200);
  return { channel, onA };
}

it('a channel disabled on one instance refuses events on the other at once', async () => {
  const { channel, onA } = await channelUsedOnA();
  await driverB.updateChannel(channel.id, { enabled: false }).expect(200);
  const res = await driverA.sendEvent(onA);
  expect(res.status).toBe(403);
  expect(res.body.code).toBe('channel_disabled');
  const events = await driverA.eventsOf(channel.id);
  expect(events.map((e) => e.status)).toEqual(['pending', 'rejected']);
});

it('a URL regenerated on one instance answers 404 on the other at once', async () => {
  const { channel, onA } = await channelUsedOnA();
  const renewed = await driverB.api('post', `/channels/${channel.id}/regenerate-url`);
  expect((await driverA.sendEvent(onA)).status).toBe(404);
  const newOnA = (renewed.body.webhook_url as string).replace(b.baseUrl, a.baseUrl);
  expect((await driverA.sendEvent(newOnA)).status).toBe(200);
  expect(await driverA.eventsOf(channel.id)).toHaveLength(2);
});

it('a channel deleted on one instance answers 404 on the other at once', async () => {
  const { channel, onA } = await channelUsedOnA();
  await driverB.api('delete', `/channels/${channel.id}`).expect(204);
  const res = await driverA.sendEvent(onA);
  expect(res.status).toBe(404);
  expect(res.body.code).toBe('channel_not_found');
  expect(await driverA.eventsOf(channel.id)).toHaveLength(1);
});
