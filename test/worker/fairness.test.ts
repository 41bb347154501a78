import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';

const BACKLOG = 2000;
const AI_LATENCY_MS = 200;

const { app, driver, ai } = useTestApp({ ai: true });

describe('fair claims', () => {
  it(`asks the AI for a workspace's single event among the next few, next to another's ${BACKLOG} pending`, async () => {
    const busy = await driver.createChannel({ name: 'Busy', template: 'Event {{n}}' });
    await app.ctx.db.query(
      `insert into events (workspace_id, channel_id, payload)
       select $1, $2, '{"n":' || n || '}' from generate_series(1, $3::integer) n`,
      [app.ctx.defaultWorkspaceId, busy.id, BACKLOG],
    );
    const quiet = await app.ctx.workspaces.create('Quiet', 10);
    const lone = await app.ctx.channels.create(quiet.id, { name: 'Lone', template: 'Lone {{n}}' });
    ai.defaultReply = { delayMs: AI_LATENCY_MS };

    const worker = createWorker(app.ctx, { concurrency: 8 });
    await worker.start();
    try {
      // Every slot is busy with the backlog before the lone event arrives.
      await ai.waitForRequests(8);
      const sent = await driver.sendEvent(lone.webhook_url, { n: 1 });
      expect(sent.status).toBe(200);
      const id = sent.body.event_id as string;
      // Requests already made when the lone event was stored: the slots' and the one ready.
      const askedBefore = ai.requests.length;
      await expect
        .poll(
          async () => {
            const { rows } = await app.ctx.db.query<{ status: string }>(
              'select status from events where id = $1',
              [id],
            );
            return rows[0]?.status;
          },
          { interval: 20, timeout: 10_000 },
        )
        .toBe('replied');
      // Counted in requests, not milliseconds, so a busy machine cannot fail it: oldest first
      // would ask for every one of the backlog before it.
      const askedAt = ai.prompts().indexOf('Lone 1');
      expect(askedAt - askedBefore).toBeGreaterThanOrEqual(0);
      expect(askedAt - askedBefore).toBeLessThan(8);
      const { rows: left } = await app.ctx.db.query<{ n: number }>(
        `select count(*)::int as n from events where status = 'pending' and channel_id = $1`,
        [busy.id],
      );
      // The backlog was still there: the lone event was not simply next in line.
      expect(left[0]?.n).toBeGreaterThan(BACKLOG / 2);
    } finally {
      await worker.stop();
    }
  });

  it('takes turns across workspaces and across the channels of a workspace, one claim at a time', async () => {
    await app.ctx.db.query('delete from events');
    ai.reset();
    const big = await driver.createChannel({ name: 'Big', template: 'big {{n}}' });
    const small = await driver.createChannel({ name: 'Small', template: 'small {{n}}' });
    const other = await app.ctx.workspaces.create('Other', 10);
    const elsewhere = await app.ctx.channels.create(other.id, {
      name: 'Elsewhere',
      template: 'elsewhere {{n}}',
    });
    for (let n = 1; n <= 5; n++) await driver.sendEvent(big.webhook_url, { n });
    await driver.sendEvent(small.webhook_url, { n: 1 });
    await driver.sendEvent(elsewhere.webhook_url, { n: 1 });

    const worker = createWorker(app.ctx, { concurrency: 1 });
    for (let i = 0; i < 3; i++) expect(await worker.runOnce()).toBe(1);
    // Oldest first would have answered big 1, 2 and 3.
    expect(ai.prompts().sort()).toEqual(['big 1', 'elsewhere 1', 'small 1']);
  });
});
