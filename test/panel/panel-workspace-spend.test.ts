import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ ai: true, env: ADMIN_ENV });
const client = useSignedInAdmin(app);

interface SpendRow {
  calls: number;
  cost_usd: number | null;
}

/** The rows of one of the Workspace page's spend tables, as their data attributes hold them. */
function rowsOf(html: string, table: string): Record<string, string>[] {
  const body = new RegExp(`<table id="${table}">[\\s\\S]*?</table>`).exec(html)?.[0] ?? '';
  return [...body.matchAll(/<tr ([^>]*data-calls[^>]*)>/g)].map((row) =>
    Object.fromEntries(
      [...(row[1] ?? '').matchAll(/data-([a-z]+)="([^"]*)"/g)].map((a) => [
        a[1] ?? '',
        unescapeHtml(a[2] ?? ''),
      ]),
    ),
  );
}

const cost = (row: SpendRow) => (row.cost_usd === null ? '' : String(row.cost_usd));

describe('the Workspace page: AI spend this month', () => {
  it('shows no breakdown before any call', async () => {
    const html = (await client.page('/workspace')).text;
    expect(html).toContain('id="spend-none"');
  });

  it('lists spend by model and by channel as GET /api/v1/spend reports it', async () => {
    await driver
      .api('put', '/prices/tiny-model')
      .send({ input_per_mtok: 1000, output_per_mtok: 2000 })
      .expect(200);
    const orders = await driver.createChannel({ name: 'Orders', ai: { model: 'tiny-model' } });
    const support = await driver.createChannel({ name: 'Support', ai: { model: 'free-model' } });
    for (const channel of [orders, orders, support]) {
      await driver.sendEvent(channel.webhook_url, { order: { id: 1 } });
    }
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);

    const spend = (await driver.api('get', '/spend').expect(200)).body as {
      by_model: (SpendRow & {
        provider: string;
        model: string | null;
        prompt_tokens: number;
        completion_tokens: number;
      })[];
      by_channel: (SpendRow & { channel_id: string | null })[];
    };
    // Two calls of 1 prompt and 1 reply token at $1000 and $2000 per million: $0.006.
    expect(spend.by_model.length).toBe(2);
    expect(spend.by_model[0]).toMatchObject({ model: 'tiny-model', calls: 2 });
    expect(spend.by_model[0]?.cost_usd).toBeCloseTo(0.006, 12);
    expect(spend.by_model[1]).toMatchObject({ model: 'free-model', calls: 1, cost_usd: null });
    expect(spend.by_channel.length).toBe(2);

    const html = (await client.page('/workspace')).text;
    expect(rowsOf(html, 'spend-by-model')).toEqual(
      spend.by_model.map((row) => ({
        provider: row.provider,
        model: row.model ?? '',
        calls: String(row.calls),
        cost: cost(row),
      })),
    );
    expect(rowsOf(html, 'spend-by-channel')).toEqual(
      spend.by_channel.map((row) => ({
        channel: row.channel_id ?? '',
        calls: String(row.calls),
        cost: cost(row),
      })),
    );
    // Dearest first, names linked, an unpriced model's cost unknown rather than $0.
    const byChannel = unescapeHtml(
      /<table id="spend-by-channel">[\s\S]*?<\/table>/.exec(html)?.[0] ?? '',
    );
    expect(byChannel).toMatch(
      new RegExp(
        `href="/channels/${orders.id}">Orders</a>[\\s\\S]*href="/channels/${support.id}">Support</a>`,
      ),
    );
    expect(byChannel).toContain('<td class="num">unknown</td>');
  });

  it('draws tokens, events and cost as three charts, each on its own axis', async () => {
    const html = (await client.page('/workspace')).text;
    for (const id of ['usage-chart-tokens', 'usage-chart-events', 'usage-chart-cost']) {
      expect(html).toContain(`<canvas id="${id}"`);
    }
    expect(html).not.toContain('id="usage-chart"');
  });
});
