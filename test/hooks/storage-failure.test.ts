import { beforeAll, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

it('answers 503 (never 200) when the database cannot be reached, and /readyz says so', async () => {
  expect((await fetch(`${app.baseUrl}/readyz`)).status).toBe(200);
  await app.ctx.db.close();

  const res = await driver.sendEvent(channel.webhook_url);
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ status: 503, code: 'service_unavailable' });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(JSON.stringify(res.body)).not.toMatch(/pool|pglite|stack|at \w+ \(/i);

  expect((await fetch(`${app.baseUrl}/readyz`)).status).toBe(503);
  expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200);
});
