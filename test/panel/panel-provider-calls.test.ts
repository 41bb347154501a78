import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, PROVIDERS_ALLOW_PRIVATE: 'true' },
});
const client = useSignedInAdmin(app);

/** The Providers page's row of one provider. */
function rowOf(html: string, provider: string): string {
  const row = new RegExp(`<tr data-provider="${provider}">[\\s\\S]*?</tr>`).exec(html)?.[0];
  if (!row) throw new Error(`no row for ${provider}`);
  return unescapeHtml(row);
}

describe('the Providers page: calls of the last 24 hours', () => {
  it('shows a primary failing 1 call of 5 behind a working fallback: 20%, its p50, its channels', async () => {
    await driver
      .api('post', '/providers')
      .send({ name: 'primary', kind: 'openai', base_url: ai.baseUrl })
      .expect(201);
    await driver.api('post', '/providers').send({ name: 'offline', kind: 'echo' }).expect(201);
    const orders = await driver.createChannel({
      name: 'Orders',
      ai: {
        provider: 'primary',
        model: 'tiny-model',
        fallbacks: [{ provider: 'offline', model: 'echo-model' }],
      },
    });
    await driver.createChannel({ name: 'Backup', ai: { provider: 'offline' } });

    // One call of five fails (503): the fallback answers it, and every event is replied.
    ai.enqueue({ status: 503 }, { delayMs: 5 }, { delayMs: 15 }, { delayMs: 25 }, { delayMs: 35 });
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const sent = await driver.sendEvent(orders.webhook_url, { order: { id: n } });
      ids.push(String(sent.body.event_id));
    }
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);

    const latencies: number[] = [];
    for (const id of ids) {
      const event = (await driver.api('get', `/events/${id}`).expect(200)).body;
      expect(event.status).toBe('replied');
      for (const call of event.calls as { provider: string; latency_ms: number }[]) {
        if (call.provider === 'primary') latencies.push(call.latency_ms);
      }
    }
    expect(latencies).toHaveLength(5);
    const median = [...latencies].sort((a, b) => a - b)[2];

    const html = (await client.page('/providers')).text;
    const primary = rowOf(html, 'primary');
    expect(primary).toContain('<td class="num" data-calls="5">5</td>');
    expect(primary).toContain('<td class="num" data-error-rate>20%</td>');
    expect(primary).toContain(`<td class="num" data-p50>${median} ms</td>`);
    expect(primary).toContain(`<a href="/channels/${orders.id}">Orders</a>`);
    expect(primary).not.toContain('Backup');

    const offline = rowOf(html, 'offline');
    expect(offline).toContain('data-calls="1"');
    expect(offline).toContain('<td class="num" data-error-rate>0%</td>');
    expect(offline).toContain('>Orders</a> <span class="muted">(fallback)</span>');
    expect(offline).toMatch(/>Backup<\/a><\/td>/);

    // The server's own provider: no channel asks it here, and it made no call.
    const fallback = rowOf(html, 'default');
    expect(fallback).toContain('data-calls="0"');
    expect(fallback).toContain('<td class="num" data-p50>—</td>');
    expect(fallback).toContain('no channel');
  });
});
