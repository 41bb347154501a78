import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true });

const completion = (prompt: number, completion: number) => ({
  body: {
    ...chatCompletion('ok'),
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
  },
});

describe('GET /api/v1/usage', () => {
  it('sums tokens and events per day (last 30 days by default) and per channel', async () => {
    const orders = await driver.createChannel({ name: 'Orders' });
    const support = await driver.createChannel({ name: 'Support' });
    ai.enqueue(completion(10, 5), completion(20, 7), completion(1, 1));
    for (const channel of [orders, orders, support]) {
      expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    }
    await createWorker(app.ctx, { concurrency: 1 }).runOnce();
    await createWorker(app.ctx, { concurrency: 1 }).runOnce();
    await createWorker(app.ctx, { concurrency: 1 }).runOnce();
    // A refused request is no AI use.
    await driver.sendEvent(orders.webhook_url, '[1]');

    const byDay = await driver.api('get', '/usage').expect(200);
    expect(byDay.body.group).toBe('day');
    expect(byDay.body.data).toHaveLength(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(byDay.body.data.at(-1)).toEqual({
      day: today,
      events: 3,
      prompt_tokens: 31,
      completion_tokens: 13,
      total_tokens: 44,
    });
    expect(byDay.body.data[0]).toMatchObject({ events: 0, total_tokens: 0 });
    expect(byDay.body.totals).toEqual({
      events: 3,
      prompt_tokens: 31,
      completion_tokens: 13,
      total_tokens: 44,
    });

    const byChannel = await driver.api('get', '/usage?group=channel').expect(200);
    expect(byChannel.body.data).toEqual([
      {
        channel_id: orders.id,
        channel_name: 'Orders',
        events: 2,
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      },
      expect.objectContaining({ channel_id: support.id, events: 1 }),
    ]);
    expect(
      byChannel.body.data.reduce(
        (sum: number, row: { total_tokens: number }) => sum + row.total_tokens,
        0,
      ),
    ).toBe(44);
  });

  it('takes a range and refuses a bad one', async () => {
    const res = await driver
      .api('get', '/usage?from=2026-01-01&to=2026-01-04&group=day')
      .expect(200);
    expect(res.body.data.map((row: { day: string }) => row.day)).toEqual([
      '2026-01-01',
      '2026-01-02',
      '2026-01-03',
    ]);
    expect((await driver.api('get', '/usage?from=2026-02-01&to=2026-01-01')).status).toBe(400);
    expect((await driver.api('get', '/usage?from=2020-01-01&to=2026-01-01')).status).toBe(400);
    expect((await driver.api('get', '/usage?group=model')).status).toBe(400);
  });
});
