import { afterAll, beforeAll, expect, it } from 'vitest';
import { Driver, type ChannelJson } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

let app: TestApp;
let channel: ChannelJson;

beforeAll(async () => {
  app = await startTestApp();
  channel = await new Driver(app).createChannel();
});
afterAll(() => app.close());

it('answers 503 (never 200) when the database cannot be reached, and /readyz says so', async () => {
  const driver = new Driver(app);
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
