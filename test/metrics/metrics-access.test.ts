import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOpsApp } from '../../src/app.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const { app, driver, ai } = useTestApp({ ai: true, env: { METRICS_TOKEN: TOKEN } });

async function scrape(): Promise<string> {
  const res = await request(app.baseUrl).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
}

describe('GET /metrics with METRICS_TOKEN set', () => {
  it('answers only a scraper that sends the token', async () => {
    for (const [name, target] of [
      ['web', request(app.baseUrl)],
      ['worker', request(createOpsApp(app.ctx))],
    ] as const) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`, 'Bearer ']) {
        const call = target.get('/metrics');
        const res = await (authorization ? call.set('Authorization', authorization) : call);
        expect([res.status, res.body.code], `${name} ${authorization}`).toEqual([
          401,
          'unauthorized',
        ]);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.text).not.toContain('hookprompt_');
        expect(res.text).not.toContain(TOKEN);
      }
      const res = await target.get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
      expect(res.status, name).toBe(200);
      expect(res.text).toContain('hookprompt_queue_depth');
    }
    // Health checks stay open to the orchestrator.
    await request(app.baseUrl).get('/healthz').expect(200);
  });
});

describe('the model label of AI calls', () => {
  it('counts models neither the price table nor the workspace prices as "other"', async () => {
    await driver
      .api('put', '/prices/house-model')
      .send({ input_per_mtok: 1, output_per_mtok: 1 })
      .expect(200);
    // Names a trial or a channel makes up, one priced by the workspace, one the table knows
    // under its own name.
    const models = ['made-up-1', 'made-up-2', 'made-up-3', 'house-model', 'gpt-4o-mini-2024-07-18'];
    for (const model of models) {
      const channel = await driver.createChannel({ name: model, ai: { model } });
      expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    }
    expect(await createWorker(app.ctx).runOnce()).toBe(models.length);
    expect(ai.requests).toHaveLength(models.length);

    const text = await scrape();
    const labels = (metric: string) =>
      [...text.matchAll(new RegExp(`^${metric}\\{[^}]*model="([^"]*)"`, 'gm'))].map((m) => m[1]);
    expect(labels('hookprompt_ai_calls_total').sort()).toEqual([
      'gpt-4o-mini',
      'house-model',
      'other',
    ]);
    expect(text).toMatch(
      /^hookprompt_ai_calls_total\{provider="default",model="other",outcome="ok"\} 3$/m,
    );
    // Costs are known for priced models only: never `other`, never a made-up name.
    expect(labels('hookprompt_ai_cost_usd_total').sort()).toEqual(['gpt-4o-mini', 'house-model']);
  });
});
