import { beforeAll, describe, expect, it } from 'vitest';
import { createTrialWorker } from '../../src/trials/create-trial-worker.js';
import { askJudge } from '../../src/trials/trial-judge.js';
import { aiCallSettings } from '../../src/worker/create-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion, fakeReplyTo, type RecordedRequest } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true });

beforeAll(async () => {
  // 1 USD per million tokens each way ×1,000,000: the fake's 1 + 1 tokens cost 2 USD a call.
  for (const model of ['fake-model', 'judge-model']) {
    await driver
      .api('put', `/prices/${model}`)
      .send({ input_per_mtok: 1_000_000, output_per_mtok: 1_000_000 })
      .expect(200);
  }
});

interface Side {
  status: string;
  reply: string | null;
  checks?: { ok: boolean }[];
}
interface TrialJson {
  id: string;
  checks?: unknown[];
  judge?: Record<string, unknown>;
  summary: {
    current: Record<string, unknown>;
    candidate: Record<string, unknown>;
    judge?: Record<string, number>;
    judge_cost_usd?: number | null;
  };
  results: { event_id: string; current: Side; candidate: Side | null; judge?: unknown }[];
}

/** Sends events with these numbers and has the worker answer them with the fake's default. */
async function answered(channel: ChannelJson, numbers: number[]): Promise<void> {
  for (const n of numbers)
    expect((await driver.sendEvent(channel.webhook_url, { n })).status).toBe(200);
  const worker = createWorker(app.ctx);
  await eventually(
    async () => {
      await worker.runOnce();
      const listed = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
      return listed.body.data.every((e: { status: string }) => e.status === 'replied');
    },
    { what: 'the events answered' },
  );
}

async function trialOf(channel: ChannelJson, body: Record<string, unknown>): Promise<TrialJson> {
  const res = await driver.api('post', `/channels/${channel.id}/trials`).send(body);
  expect(res.status, res.text).toBe(202);
  while ((await createTrialWorker(app.ctx).runOnce()) > 0);
  return (await driver.api('get', `/trials/${res.body.id}`).expect(200)).body as TrialJson;
}

const isJudge = (request: RecordedRequest) =>
  JSON.stringify(request.body).includes('You compare two replies');

/** Reply A's and reply B's text in a judge's prompt. */
function repliesShown(request: RecordedRequest): { A: string; B: string } {
  const prompt = request.prompt ?? '';
  const between = (tag: string) =>
    new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(prompt)?.[1] ?? '';
  return { A: between('reply-A'), B: between('reply-B') };
}

/**
 * The candidate answers `Order n is confirmed.`; the judge prefers the reply naming the order,
 * and calls order 2 a tie.
 */
function candidateAndJudge(request: RecordedRequest) {
  if (!isJudge(request)) {
    const n = /Order #(\d+)/.exec(request.prompt ?? '')?.[1];
    return { body: chatCompletion(n ? `Order ${n} is confirmed.` : fakeReplyTo(request.prompt)) };
  }
  const { A, B } = repliesShown(request);
  const winner = /Order 2 is/.test(A + B) ? 'tie' : /is confirmed/.test(A) ? 'A' : 'B';
  return { body: chatCompletion(JSON.stringify({ winner, reason: `${winner} names the order` })) };
}

describe('trials with checks and a judge', () => {
  it('applies the checks to both sides of every result and counts the results passing them all', async () => {
    const channel = await driver.createChannel({ name: 'Checked', template: 'Order {{n}}' });
    await answered(channel, [1, 2, 3, 4]);
    ai.defaultReply = (request) => {
      const n = Number(/#(\d+)/.exec(request.prompt ?? '')?.[1]);
      return { body: chatCompletion(n % 2 === 0 ? JSON.stringify({ n }) : `number ${n}`) };
    };
    const checks = [
      { path: 'status', op: 'eq', value: 'replied' },
      { path: 'reply', op: 'contains', value: '"n"' },
      { path: 'reply.n', op: 'gte', value: 2 },
    ];
    const trial = await trialOf(channel, {
      template: 'Order #{{n}}',
      ai: { response_format: 'json' },
      events: { last: 3 },
      checks,
    });

    expect(trial.checks).toEqual(checks);
    // Events 4, 3, 2: the current replies are text; the candidate's JSON for even numbers.
    const shown = trial.results.map((r) => ({
      current: r.current.checks?.map((c) => c.ok),
      candidate: r.candidate?.checks?.map((c) => c.ok),
    }));
    expect(shown).toEqual([
      { current: [true, false, false], candidate: [true, true, true] },
      { current: [true, false, false], candidate: [false, false, false] },
      { current: [true, false, false], candidate: [true, true, true] },
    ]);
    expect(trial.summary.current.checks_passed).toBe(0);
    expect(trial.summary.candidate.checks_passed).toBe(2);
    expect(trial.summary).not.toHaveProperty('judge');
  });

  it('asks the judge once per result both sides replied, maps its verdict back and prices it', async () => {
    const channel = await driver.createChannel({ name: 'Judged', template: 'Order {{n}}' });
    await answered(channel, [1, 2, 3]);
    const spentBefore = (await driver.api('get', '/workspace').expect(200)).body.spent_usd;
    ai.requests.length = 0;
    ai.defaultReply = candidateAndJudge;

    const trial = await trialOf(channel, {
      template: 'Order #{{n}}',
      events: { last: 3 },
      judge: { model: 'judge-model', rubric: 'Prefer the reply that names the order.' },
    });

    expect(trial.judge).toEqual({
      model: 'judge-model',
      rubric: 'Prefer the reply that names the order.',
    });
    expect(trial.results.map((r) => r.judge)).toEqual([
      { winner: 'candidate', reason: expect.stringMatching(/names the order$/) },
      { winner: 'tie', reason: 'tie names the order' },
      { winner: 'candidate', reason: expect.stringMatching(/names the order$/) },
    ]);
    expect(trial.summary.judge).toEqual({ current: 0, candidate: 2, tie: 1 });
    expect(trial.summary.judge_cost_usd).toBe(6);

    // Three candidate calls and three judge calls; the judge's name its model, its rubric,
    // the payload and both replies, and ask for a JSON verdict.
    const judged = ai.requests.filter(isJudge);
    expect(judged).toHaveLength(3);
    expect(ai.requests).toHaveLength(6);
    for (const request of judged) {
      const body = request.body as { model: string; response_format: { type: string } };
      expect(body.model).toBe('judge-model');
      expect(body.response_format.type).toBe('json_schema');
      expect(request.prompt).toContain('Prefer the reply that names the order.');
      expect(request.prompt).toMatch(/<payload>\n\{"n":\d\}\n<\/payload>/);
      const { A, B } = repliesShown(request);
      expect([A, B].sort()).toEqual(
        [
          expect.stringMatching(/^Fake model reply to: Order \d$/),
          expect.stringMatching(/^Order \d is confirmed\.$/),
        ].sort(),
      );
    }
    const spent = (await driver.api('get', '/workspace').expect(200)).body.spent_usd;
    expect(spent).toBeCloseTo(spentBefore + 12, 9);
  });

  it('maps the verdict back whichever reply the judge was shown first', async () => {
    ai.defaultReply = candidateAndJudge;
    const result = {
      workspaceId: app.ctx.defaultWorkspaceId,
      ai: {},
      payload: '{"n":7}',
      current: 'Fake model reply to: Order 7',
      candidate: 'Order 7 is confirmed.',
      budgeted: false,
    };
    const judge = { model: 'judge-model', rubric: 'Prefer the reply that names the order.' };
    for (const candidateFirst of [true, false]) {
      ai.requests.length = 0;
      const { verdict, calls } = await askJudge(
        aiCallSettings(app.ctx),
        judge,
        result,
        new AbortController().signal,
        candidateFirst,
      );
      expect(verdict).toMatchObject({ winner: 'candidate' });
      expect(calls).toHaveLength(1);
      const shown = repliesShown(ai.requests[0] as RecordedRequest);
      expect(shown.A).toBe(candidateFirst ? result.candidate : result.current);
    }
  });

  it('leaves results where a side did not reply unjudged, and a judge that is not JSON an error', async () => {
    const channel = await driver.createChannel({ name: 'Half', template: 'Order {{n}}' });
    await answered(channel, [1, 2]);
    ai.requests.length = 0;
    ai.defaultReply = (request) => {
      if (isJudge(request)) return { body: chatCompletion('A is better') };
      const n = Number(/#(\d+)/.exec(request.prompt ?? '')?.[1]);
      return n === 1 ? { status: 400, body: { error: { message: 'bad' } } } : {};
    };
    const trial = await trialOf(channel, {
      template: 'Order #{{n}}',
      events: { last: 2 },
      judge: { model: 'judge-model', rubric: 'Any.' },
    });
    // Event 2 (newest first): both replied, the judge answered no JSON; event 1: no judge.
    expect(trial.results[0]?.judge).toEqual({ error: expect.stringMatching(/^reply_invalid:/) });
    expect(trial.results[1]?.candidate?.status).toBe('failed');
    expect(trial.results[1]).not.toHaveProperty('judge');
    expect(trial.summary.judge).toEqual({ current: 0, candidate: 0, tie: 0 });
    expect(ai.requests.filter(isJudge)).toHaveLength(1);
  });

  it('refuses a judge with an unknown provider, without a model or rubric, and bad checks', async () => {
    const channel = await driver.createChannel({ name: 'Refused', template: 'Order {{n}}' });
    await answered(channel, [1]);
    const refused = async (body: Record<string, unknown>) =>
      (
        await driver
          .api('post', `/channels/${channel.id}/trials`)
          .send({ events: { last: 1 }, ...body })
      ).body as { status: number; code: string; detail: string };

    expect(
      await refused({ judge: { provider: 'nowhere', model: 'm', rubric: 'r' } }),
    ).toMatchObject({
      status: 400,
      code: 'unknown_provider',
    });
    expect(await refused({ judge: { rubric: 'r' } })).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(await refused({ judge: { model: 'm', rubric: '' } })).toMatchObject({
      code: 'validation_failed',
    });
    expect(await refused({ checks: [{ path: 'payload.n', op: 'eq', value: 1 }] })).toMatchObject({
      code: 'validation_failed',
      detail: expect.stringContaining('must start with status or reply or reply.'),
    });
    const eleven = Array.from({ length: 11 }, () => ({
      path: 'status',
      op: 'eq',
      value: 'replied',
    }));
    expect(await refused({ checks: eleven })).toMatchObject({ code: 'validation_failed' });
  });
});
