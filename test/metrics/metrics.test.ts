import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOpsApp } from '../../src/app.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import type { TestApp } from '../support/test-app.js';

const { app, driver } = useTestApp({ env: { RATE_LIMIT_PER_CHANNEL: '3' } });

async function scrape(target: TestApp = app): Promise<string> {
  const res = await request(target.baseUrl).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
}

/** The value of one sample, e.g. `value(text, 'hookprompt_replies_total{outcome="replied"}')`; undefined when absent. */
function value(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe('GET /metrics', () => {
  it('counts accepted and refused webhook requests, by code', async () => {
    const channel = await driver.createChannel({ template: 'Order {{order.id}}' });
    const disabled = await driver.createChannel({ enabled: false });
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    expect(
      (
        await driver.sendEvent(channel.webhook_url, 'a=1', {
          contentType: 'application/x-www-form-urlencoded',
        })
      ).status,
    ).toBe(415);
    expect((await driver.sendEvent(disabled.webhook_url)).status).toBe(403);
    expect((await driver.sendEvent(`${app.baseUrl}/hooks/${'x'.repeat(32)}`)).status).toBe(404);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(429);

    const text = await scrape();
    expect(value(text, 'hookprompt_events_received_total')).toBe(2);
    expect(value(text, 'hookprompt_events_rejected_total{code="unsupported_media_type"}')).toBe(1);
    expect(value(text, 'hookprompt_events_rejected_total{code="channel_disabled"}')).toBe(1);
    expect(value(text, 'hookprompt_events_rejected_total{code="channel_not_found"}')).toBe(1);
    expect(value(text, 'hookprompt_events_rejected_total{code="rate_limited"}')).toBe(1);
  });

  it('shows the queue from the database, and the worker outcomes and AI latency', async () => {
    const before = await scrape();
    expect(value(before, 'hookprompt_queue_depth{status="pending"}')).toBe(2);
    expect(value(before, 'hookprompt_queue_depth{status="processing"}')).toBe(0);
    expect(value(before, 'hookprompt_queue_oldest_pending_age_seconds')).toBeGreaterThan(0);

    const empty = await driver.createChannel({ template: '{{nothing}}' });
    expect((await driver.sendEvent(empty.webhook_url)).status).toBe(200);
    expect(await createWorker(app.ctx).runOnce()).toBe(3);

    const after = await scrape();
    expect(value(after, 'hookprompt_queue_depth{status="pending"}')).toBe(0);
    expect(value(after, 'hookprompt_queue_oldest_pending_age_seconds')).toBe(0);
    expect(value(after, 'hookprompt_replies_total{outcome="replied"}')).toBe(2);
    expect(value(after, 'hookprompt_replies_total{outcome="skipped"}')).toBe(1);
    expect(value(after, 'hookprompt_ai_request_duration_seconds_count{result="ok"}')).toBe(2);
    // Process metrics come along for dashboards.
    expect(after).toContain('process_cpu_seconds_total');
  });

  it('times the database write of each batch of webhooks', async () => {
    const channel = await driver.createChannel();
    const count = 'hookprompt_event_batch_write_seconds_count';
    const sum = 'hookprompt_event_batch_write_seconds_sum';
    const before = await scrape();
    // One webhook at a time: each is a batch of its own.
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    const after = await scrape();
    expect(value(after, count)).toBe((value(before, count) ?? 0) + 1);
    expect(value(after, sum)).toBeGreaterThan(value(before, sum) ?? 0);
    expect(value(after, 'hookprompt_event_batch_write_seconds_bucket{le="+Inf"}')).toBe(
      value(after, count),
    );
  });

  describe('beside another app', () => {
    const { app: other } = useTestApp();

    it('keeps each context’s counters apart', async () => {
      expect(value(await scrape(other), 'hookprompt_events_received_total')).toBe(0);
    });
  });
});

describe('the worker role’s HTTP app', () => {
  it('serves /healthz, /readyz and /metrics, and nothing else', async () => {
    const ops = request(createOpsApp(app.ctx));
    expect((await ops.get('/healthz')).status).toBe(200);
    expect((await ops.get('/readyz')).status).toBe(200);
    expect((await ops.get('/metrics')).text).toContain('hookprompt_queue_depth');
    expect(
      (await ops.get('/api/v1/events').set('Authorization', 'Bearer test-admin-key-0123456789'))
        .status,
    ).toBe(404);
    expect((await ops.post(`/hooks/${'x'.repeat(32)}`).send({})).status).toBe(404);
  });
});
