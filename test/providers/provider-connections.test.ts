import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { openDescriptors, staysFlat } from '../support/open-descriptors.js';
import { useFakeAi, useTestApp } from '../support/harness.js';

// The finding: every provider test left a socket open (300 tests, 300 more descriptors). The
// model server here keeps idle connections open for a minute, as real ones do, so whatever the
// service leaves open stays open; this process holds both ends of each connection.
const model = useFakeAi({ keepAliveMs: 60_000 });
const { app, driver } = useTestApp({
  env: () => ({ ...model.env(), PROVIDERS_ALLOW_PRIVATE: 'true' }),
});

describe('outbound connections are bounded', () => {
  it('leaves no connection open after a provider test (100 tests through the API)', async () => {
    const { body: provider } = await driver
      .api('post', '/providers')
      .send({ name: 'tested', kind: 'openai', base_url: model.baseUrl, api_key: 'sk-k' })
      .expect(201);
    const testOnce = async (id: string) => {
      const res = await driver.api('post', `/providers/${id}/test`).send({ model: 'm-1' });
      expect(res.body).toMatchObject({ ok: true });
    };
    for (let i = 0; i < 5; i++) await testOnce(provider.id as string);
    const before = openDescriptors();
    for (let i = 0; i < 50; i++) await testOnce(provider.id as string);
    // The server's own provider (`default`) is tested through an instance of its own too.
    for (let i = 0; i < 50; i++) await testOnce('default');
    expect(model.requests.length).toBe(105);
    await staysFlat(before);
  }, 60_000);

  it("leaves no connection of a provider's replaced settings open", async () => {
    const { body: provider } = await driver
      .api('post', '/providers')
      .send({ name: 'replaced', kind: 'openai', base_url: model.baseUrl, api_key: 'sk-0' })
      .expect(201);
    const channel = await driver.createChannel({ ai: { provider: 'replaced' } });
    const worker = createWorker(app.ctx);
    const replyOnce = async () => {
      expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
      expect(await worker.runOnce()).toBe(1);
    };
    await replyOnce();
    const before = openDescriptors();
    for (let i = 1; i <= 40; i++) {
      await driver
        .api('patch', `/providers/${provider.id as string}`)
        .send({ api_key: `sk-${i}` })
        .expect(200);
      await replyOnce();
    }
    expect(model.requests.at(-1)?.headers.authorization).toBe('Bearer sk-40');
    await staysFlat(before);
  }, 60_000);
});
