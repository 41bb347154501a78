import { beforeAll, describe, expect, it } from 'vitest';
import { claimTrialResults } from '../../src/trials/queue-claim.js';
import { createTrialWorker } from '../../src/trials/create-trial-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion, type RecordedRequest } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

// 8 worker slots: trials take 2 of them.
const { app, driver, ai } = useTestApp({ ai: true, env: { WORKER_CONCURRENCY: '8' } });

beforeAll(async () => {
  // A price for the fake model, so the calls cost something: 1 USD per million tokens each way.
  await driver
    .api('put', '/prices/fake-model')
    .send({ input_per_mtok: 1_000_000, output_per_mtok: 1_000_000 })
    .expect(200);
});

interface TrialJson {
  id: string;
  status: string;
  total: number;
  done: number;
  candidate: Record<string, unknown>;
  summary: { current: Record<string, unknown>; candidate: Record<string, unknown> };
  results: {
    event_id: string;
    current: Record<string, unknown>;
    candidate: Record<string, unknown> | null;
  }[];
}

/** Sends events and has the worker answer them; their ids, oldest first. */
async function answered(channel: ChannelJson, bodies: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const sent = await driver.sendEvent(channel.webhook_url, body);
    expect(sent.status).toBe(200);
    ids.push(sent.body.event_id as string);
  }
  const worker = createWorker(app.ctx);
  // A thread's events are answered one at a time: rounds until every one has its outcome.
  await eventually(
    async () => {
      await worker.runOnce();
      const listed = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
      return listed.body.data.every((e: { status: string }) => e.status === 'replied');
    },
    { what: 'the events answered' },
  );
  return ids;
}

async function startTrial(channelId: string, body: Record<string, unknown>): Promise<TrialJson> {
  const res = await driver.api('post', `/channels/${channelId}/trials`).send(body);
  expect(res.status, res.text).toBe(202);
  return res.body as TrialJson;
}

/** Runs the trial workers until the trial has no result left to ask; the trial as read then. */
async function runTrial(id: string): Promise<TrialJson> {
  while ((await createTrialWorker(app.ctx).runOnce()) > 0);
  return (await driver.api('get', `/trials/${id}`).expect(200)).body as TrialJson;
}

const workspace = async () => (await driver.api('get', '/workspace').expect(200)).body;

/** The candidate answers JSON only for even numbers: its schema breaks on the odd ones. */
function jsonForEvenNumbers(request: RecordedRequest) {
  const n = Number(/#(\d+)/.exec(request.prompt ?? '')?.[1]);
  return { body: chatCompletion(n % 2 === 0 ? JSON.stringify({ n }) : `number ${n}`) };
}

describe('trials', () => {
  it('asks a candidate on the last events side by side with their outcomes, changing nothing', async () => {
    const channel = await driver.createChannel({ name: 'Tried', template: 'Order {{n}}' });
    const ids = await answered(channel, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const events = async () =>
      (await driver.api('get', `/events?channel_id=${channel.id}`).expect(200)).body.data;
    const before = await events();
    const spentBefore = (await workspace()).spent_usd as number;
    const chatsBefore = (await workspace()).chats_used as number;
    ai.requests.length = 0;
    ai.defaultReply = jsonForEvenNumbers;

    const started = await startTrial(channel.id, {
      template: 'Order #{{n}}',
      ai: { response_format: 'json' },
      events: { last: 3 },
    });
    expect(started).toMatchObject({
      status: 'running',
      total: 3,
      done: 0,
      candidate: { template: 'Order #{{n}}', ai: { response_format: 'json' } },
    });
    const trial = await runTrial(started.id);

    expect(trial).toMatchObject({
      status: 'done',
      total: 3,
      done: 3,
      finished_at: expect.any(String),
    });
    // Newest first: events 4, 3, 2.
    expect(trial.results.map((r) => r.event_id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(trial.results[0]).toEqual({
      event_id: ids[3],
      current: {
        version: 1,
        status: 'replied',
        prompt: 'Order 4',
        reply: 'Fake model reply to: Order 4',
        error: null,
        usage: {
          prompt_tokens: 1,
          completion_tokens: 1,
          total_tokens: 2,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        cost_usd: 2,
        latency_ms: expect.any(Number),
      },
      candidate: {
        status: 'replied',
        prompt: 'Order #4',
        reply: '{"n":4}',
        error: null,
        usage: {
          prompt_tokens: 1,
          completion_tokens: 1,
          total_tokens: 2,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        cost_usd: 2,
        latency_ms: expect.any(Number),
        missing: [],
      },
    });
    expect(trial.results[1]?.candidate).toMatchObject({
      status: 'failed',
      reply: null,
      error: expect.stringMatching(/^reply_invalid:/),
    });
    expect(trial.summary.current).toMatchObject({
      replied: 3,
      failed: 0,
      total_tokens: 6,
      cost_usd: 6,
    });
    expect(trial.summary.candidate).toMatchObject({
      replied: 2,
      failed: 1,
      skipped: 0,
      total_tokens: 6,
      cost_usd: 6,
      mean_latency_ms: expect.any(Number),
    });
    // One attempt per event, no retries; the requests asked for JSON.
    expect(ai.requests).toHaveLength(3);
    expect((ai.requests[0]?.body as { response_format: unknown }).response_format).toEqual({
      type: 'json_object',
    });

    // Nothing changed on the events, no chat was used, but the calls count in spent_usd.
    expect(await events()).toEqual(before);
    expect((await workspace()).chats_used).toBe(chatsBefore);
    expect((await workspace()).spent_usd).toBeCloseTo(spentBefore + 6, 9);

    // Listed newest first without results.
    const listed = await driver.api('get', `/channels/${channel.id}/trials`).expect(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ id: started.id, status: 'done' });
    expect(listed.body.data[0]).not.toHaveProperty('results');
  });

  it('promotes the candidate, merged onto the ai it started from, as the next version', async () => {
    const channel = await driver.createChannel({
      name: 'Promoted',
      template: 'Old {{n}}',
      ai: { temperature: 0.2 },
    });
    await answered(channel, [{ n: 1 }]);
    const trial = await startTrial(channel.id, {
      template: 'New {{n}}',
      ai: { max_tokens: 99 },
      events: { last: 1 },
    });
    await runTrial(trial.id);
    const promoted = await driver.api('post', `/trials/${trial.id}/promote`).expect(200);
    expect(promoted.body).toMatchObject({
      id: channel.id,
      version: 2,
      template: 'New {{n}}',
      ai: expect.objectContaining({ temperature: 0.2, max_tokens: 99 }),
    });
    // And it can be rolled back.
    const restored = await driver
      .api('post', `/channels/${channel.id}/versions/1/restore`)
      .expect(200);
    expect(restored.body).toMatchObject({ version: 3, template: 'Old {{n}}' });
  });

  it('keeps the order of chosen ids, leaves out payloads that are not JSON objects, refuses others', async () => {
    const channel = await driver.createChannel({ name: 'Chosen', template: 'Text {{.}}' });
    const [a, b] = await answered(channel, [{ n: 1 }, { n: 2 }]);
    // A refused body is recorded as a rejected event: not a JSON object, so left out.
    const plain = await driver.sendEvent(channel.webhook_url, 'not json', {
      contentType: 'text/plain',
    });
    expect(plain.status).toBe(415);
    const rejected = await driver
      .api('get', `/events?channel_id=${channel.id}&status=rejected`)
      .expect(200);
    const rejectedId = rejected.body.data[0].id as string;
    const other = await driver.createChannel({ name: 'Other' });
    const [foreign] = await answered(other, [{ n: 9 }]);

    const trial = await startTrial(channel.id, {
      events: { ids: [a, rejectedId, b] },
    });
    expect(trial.total).toBe(2);
    expect(trial.candidate).toEqual({});
    expect(trial.results.map((r) => r.event_id)).toEqual([a, b]);
    await driver.api('post', `/trials/${trial.id}/cancel`).expect(200);

    for (const ids of [[a, foreign], ['99999999']]) {
      const res = await driver
        .api('post', `/channels/${channel.id}/trials`)
        .send({ events: { ids } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    for (const events of [{ last: 0 }, { last: 101 }, { ids: [] }, {}]) {
      const res = await driver.api('post', `/channels/${channel.id}/trials`).send({ events });
      expect(res.status).toBe(400);
    }
    await driver
      .api('post', '/channels/999999/trials')
      .send({ events: { last: 1 } })
      .expect(404);
    await driver.api('get', '/trials/999999').expect(404);
  });

  it('sends the thread history the event had', async () => {
    const channel = await driver.createChannel({
      name: 'Threaded',
      template: 'Say {{text}}',
      ai: { thread_key: '{{user}}', history: 5 },
    });
    const [, second] = await answered(channel, [
      { user: 'ann', text: 'hello' },
      { user: 'ann', text: 'again' },
      { user: 'ann', text: 'later' },
    ]);
    ai.requests.length = 0;
    const trial = await startTrial(channel.id, {
      template: 'Now say {{text}}',
      events: { ids: [second] },
    });
    await runTrial(trial.id);
    expect(ai.requests.map((r) => r.prompt)).toEqual(['Now say again']);
    const messages = (ai.requests[0]?.body as { messages: { role: string; content: string }[] })
      .messages;
    // The first event of the thread, not the later one.
    expect(messages).toEqual([
      { role: 'user', content: 'Say hello' },
      { role: 'assistant', content: 'Fake model reply to: Say hello' },
      { role: 'user', content: 'Now say again' },
    ]);
  });

  it('takes a quarter of the worker slots, and a trial in progress survives a restart', async () => {
    const channel = await driver.createChannel({ name: 'Restarted', template: 'Item {{n}}' });
    await answered(
      channel,
      [1, 2, 3, 4, 5].map((n) => ({ n })),
    );
    const trial = await startTrial(channel.id, { template: 'Item #{{n}}', events: { last: 5 } });
    ai.requests.length = 0;

    // 8 worker slots: one round asks 2 of the 5.
    expect(await createTrialWorker(app.ctx).runOnce()).toBe(2);
    // A worker dies holding two results (its lease has run out).
    const held = await claimTrialResults(app.ctx.db, 'dead-worker', 2, 0);
    expect(held).toHaveLength(2);
    // Another process picks up where it was: the three results not yet asked, nothing twice.
    const finished = await runTrial(trial.id);
    expect(finished).toMatchObject({ status: 'done', done: 5 });
    expect(ai.requests).toHaveLength(5);
    expect(new Set(ai.requests.map((r) => r.prompt)).size).toBe(5);
  });

  it('waits while the workspace has spent its budget, as live events do', async () => {
    const channel = await driver.createChannel({ name: 'Budgeted', template: 'B {{n}}' });
    await answered(channel, [{ n: 1 }]);
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    try {
      const trial = await startTrial(channel.id, { events: { last: 1 } });
      ai.requests.length = 0;
      expect(await createTrialWorker(app.ctx).runOnce()).toBe(0);
      expect(ai.requests).toHaveLength(0);
      await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
      expect(await runTrial(trial.id)).toMatchObject({ status: 'done', done: 1 });
    } finally {
      await driver.setWorkspace({ monthly_budget_usd: null });
    }
  });

  it('cancels a trial: what was not asked stays unasked', async () => {
    const channel = await driver.createChannel({ name: 'Canceled', template: 'C {{n}}' });
    await answered(channel, [{ n: 1 }, { n: 2 }]);
    const trial = await startTrial(channel.id, { events: { last: 2 } });
    const canceled = await driver.api('post', `/trials/${trial.id}/cancel`).expect(200);
    expect(canceled.body).toMatchObject({
      status: 'canceled',
      done: 0,
      finished_at: expect.any(String),
    });
    ai.requests.length = 0;
    const after = await runTrial(trial.id);
    expect(after).toMatchObject({ status: 'canceled', done: 0 });
    expect(after.results.every((r) => r.candidate === null)).toBe(true);
    expect(ai.requests).toHaveLength(0);
  });
});
