import { beforeAll, describe, expect, it } from 'vitest';
import { createTrialWorker } from '../../src/trials/create-trial-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true, env: ADMIN_ENV });
let panel: PanelClient;

beforeAll(async () => {
  panel = new PanelClient(app);
  expect((await panel.signIn()).status).toBe(303);
});

/** Every <script> of a page loads a file: the CSP allows no inline script. */
const inlineScripts = (html: string) =>
  [...html.matchAll(/<script\b([^>]*)>/g)].filter((match) => !/\bsrc=/.test(match[1] ?? ''));

describe('trials in the panel', () => {
  it('tries the unsaved edit on recent events, shows the replies side by side, and promotes it', async () => {
    const id = await panel.createChannel('Shop', 'Thanks for order {{order.id}}');
    const url = await panel.webhookUrl(id);
    for (const n of [1, 2]) {
      expect((await driver.sendEvent(url, { order: { id: n } })).status).toBe(200);
    }
    await createWorker(app.ctx).runOnce();

    const editor = await panel.page(`/channels/${id}`);
    expect(editor.text).toContain('Try on recent events');
    expect(editor.text).toMatch(/v1 <span class="badge badge-active">current<\/span>/);

    // "Try on recent events" posts the editor's form: nothing is saved.
    const tried = await panel.form(`/channels/${id}/trials`, {
      name: 'Shop',
      template: 'Warm thanks for order {{order.id}}',
    });
    expect(tried.status).toBe(303);
    const trialPath = tried.headers.location as string;
    expect(trialPath).toMatch(new RegExp(`^/channels/${id}/trials/\\d+$`));
    expect((await driver.api('get', `/channels/${id}`)).body).toMatchObject({
      version: 1,
      template: 'Thanks for order {{order.id}}',
    });

    // The candidate is what the edit changed: the template only.
    const asApi = await driver.api('get', `/trials/${trialPath.split('/').at(-1) as string}`);
    expect(asApi.body.candidate).toEqual({ template: 'Warm thanks for order {{order.id}}' });

    while ((await createTrialWorker(app.ctx).runOnce()) > 0);
    const page = await panel.page(trialPath);
    expect(page.status).toBe(200);
    expect(page.text).toContain('2 of 2 events asked');
    expect(page.text).toContain('Fake model reply to: Warm thanks for order 2');
    expect(page.text).toContain('Fake model reply to: Thanks for order 2');
    // The word diff marks what the candidate changed.
    expect(page.text).toContain('<del>Thanks </del><ins>Warm thanks </ins>');
    // The payload laid out; the whole change shown before Promote.
    expect(page.text).toContain('{\n  &#34;order&#34;: {\n    &#34;id&#34;: 2\n  }\n}');
    expect(page.text).toContain(
      '<del>Thanks for order {{order.id}}</del><ins>Warm thanks for order {{order.id}}</ins>',
    );
    expect(inlineScripts(page.text)).toEqual([]);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);

    const promoted = await panel.form(`${trialPath}/promote`);
    expect(promoted.status).toBe(303);
    expect(promoted.headers.location).toBe(`/channels/${id}`);
    expect((await driver.api('get', `/channels/${id}`)).body).toMatchObject({
      version: 2,
      template: 'Warm thanks for order {{order.id}}',
    });

    // Brain Logs shows the events answered with a version, linked from the version history.
    const answeredV2 = await driver.sendEvent(url, { order: { id: 3 } });
    await createWorker(app.ctx).runOnce();
    const v2 = await panel.page(`/logs?channel=${id}&version=2`);
    expect(v2.status).toBe(200);
    expect(v2.text).toContain(`/logs/${String(answeredV2.body.event_id)}"`);
    const v1 = await panel.page(`/logs?channel=${id}&version=1`);
    expect(v1.text).not.toContain(`/logs/${String(answeredV2.body.event_id)}"`);

    // The version history restores the first version as the third.
    const history = await panel.page(`/channels/${id}`);
    expect(history.text).toContain(`action="/channels/${id}/versions/1/restore"`);
    expect(history.text).toContain(`href="/logs?channel=${id}&amp;version=2"`);
    const restored = await panel.form(`/channels/${id}/versions/1/restore`);
    expect(restored.status).toBe(303);
    expect((await driver.api('get', `/channels/${id}`)).body).toMatchObject({
      version: 3,
      template: 'Thanks for order {{order.id}}',
    });
  });

  it('shows a field diff for JSON replies, and discards a trial', async () => {
    const id = await panel.createChannel('Json', 'Order {{order.id}}');
    const url = await panel.webhookUrl(id);
    ai.defaultReply = (request) => ({
      body: {
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: JSON.stringify({
                ok: true,
                tone: request.prompt?.includes('!') ? 'loud' : 'calm',
              }),
            },
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: 1,
          completion_tokens: 1,
          total_tokens: 2,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      },
    });
    expect((await driver.sendEvent(url, { order: { id: 7 } })).status).toBe(200);
    await createWorker(app.ctx).runOnce();
    const tried = await panel.form(`/channels/${id}/trials`, {
      name: 'Json',
      template: 'Order {{order.id}}!',
    });
    const trialPath = tried.headers.location as string;
    // Discarded before it ran: it stays unasked and the channel unchanged.
    const discarded = await panel.form(`${trialPath}/discard`);
    expect(discarded.status).toBe(303);
    const trialId = trialPath.split('/').at(-1) as string;
    expect((await driver.api('get', `/trials/${trialId}`)).body.status).toBe('canceled');

    const again = await panel.form(`/channels/${id}/trials`, {
      name: 'Json',
      template: 'Order {{order.id}}!',
      ai_temperature: '0.7',
    });
    const againId = (again.headers.location as string).split('/').at(-1) as string;
    expect((await driver.api('get', `/trials/${againId}`)).body.total).toBe(1);

    // How many recent events to try is the admin's to say, within the API's 1–100.
    const refused = await panel.form(`/channels/${id}`.concat('/trials'), {
      name: 'Json',
      template: 'Order {{order.id}}!',
      trial_events: '101',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('A whole number of events from 1 to 100.');
    expect(refused.text).toContain('id="trial_events" name="trial_events" min="1" max="100"');
    expect((await driver.api('get', `/trials/${againId}`)).body.candidate).toEqual({
      template: 'Order {{order.id}}!',
      ai: { temperature: 0.7 },
    });
    while ((await createTrialWorker(app.ctx).runOnce()) > 0);
    const page = await panel.page(again.headers.location as string);
    expect(page.text).toMatch(/<tr class="diff-changed"><td><code>tone<\/code>/);
    expect(page.text).toContain('&#34;loud&#34;');
    expect(page.text).toMatch(/<tr class="diff-same"><td><code>ok<\/code>/);
    ai.defaultReply = {};
  });

  it("shows the whole change before Promote, each event's checks and verdict, and the changed ones alone", async () => {
    const id = await panel.createChannel('Support', 'Ticket {{subject}}');
    await driver
      .api('patch', `/channels/${id}`)
      .send({ ai: { system_prompt: 'Be brief.' } })
      .expect(200);
    await driver
      .api('put', '/prices/judge-model')
      .send({ input_per_mtok: 1_000_000, output_per_mtok: 1_000_000 })
      .expect(200);
    const url = await panel.webhookUrl(id);
    const isJudge = (prompt: string | undefined) => prompt?.startsWith('Rubric:') === true;
    // "hello" is answered the same whatever the prompt; the judge prefers a reply naming "Ticket:".
    ai.defaultReply = (request) => {
      const prompt = request.prompt ?? '';
      if (isJudge(prompt)) {
        const a = /<reply-A>\n([\s\S]*?)\n<\/reply-A>/.exec(prompt)?.[1] ?? '';
        const b = /<reply-B>\n([\s\S]*?)\n<\/reply-B>/.exec(prompt)?.[1] ?? '';
        const winner = a === b ? 'tie' : a.includes('Ticket:') ? 'A' : 'B';
        return {
          body: chatCompletion(
            JSON.stringify({ winner, reason: `${winner}: it names the ticket` }),
          ),
        };
      }
      return { body: chatCompletion(prompt.endsWith('hello') ? 'Hello!' : `Answer to ${prompt}`) };
    };
    for (const subject of ['refund', 'hello', 'late']) {
      expect((await driver.sendEvent(url, { subject })).status).toBe(200);
    }
    await createWorker(app.ctx).runOnce();

    // A judge without a rubric is refused beside its field, what was typed kept.
    const refused = await panel.form(`/channels/${id}/trials`, {
      name: 'Support',
      template: 'Ticket: {{subject}}',
      trial_judge_model: 'judge-model',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="trial_judge_rubric-error">Say what the judge prefers/);
    expect(refused.text).toContain(
      'id="trial_judge_model" name="trial_judge_model" value="judge-model"',
    );

    const tried = await panel.form(`/channels/${id}/trials`, {
      name: 'Support',
      template: 'Ticket: {{subject}}',
      ai_system_prompt: 'Be warm.',
      trial_checks: 'reply contains "Ticket:"\nstatus eq "replied"',
      trial_judge_model: 'judge-model',
      trial_judge_rubric: 'Prefer the reply that names the ticket.',
    });
    expect(tried.status, tried.text.slice(0, 500)).toBe(303);
    const trialPath = tried.headers.location as string;
    while ((await createTrialWorker(app.ctx).runOnce()) > 0);
    const page = await panel.page(trialPath);
    expect(page.status).toBe(200);

    // Before Promote: the template and the system prompt, each as a diff.
    const change = /<section class="card" aria-labelledby="change-heading"[\s\S]*?<\/section>/.exec(
      page.text,
    )?.[0];
    expect(change).toContain('<del>Ticket {{subject}}</del><ins>Ticket: {{subject}}</ins>');
    expect(change).toMatch(
      /data-member="system_prompt">[\s\S]*<del>Be brief\.<\/del><ins>Be warm\.<\/ins>/,
    );
    expect(change).not.toContain('data-member="temperature"');

    // The summary: checks passed and the judge's preferences per side.
    const side = (key: string, cell: string) =>
      new RegExp(`data-side="${key}">[\\s\\S]*?<td ${cell}>(\\d+)</td>`).exec(page.text)?.[1];
    expect([
      side('current', 'data-checks-passed'),
      side('candidate', 'data-checks-passed'),
    ]).toEqual(['0', '2']);
    expect([side('current', 'data-judge-wins'), side('candidate', 'data-judge-wins')]).toEqual([
      '0',
      '2',
    ]);
    expect(page.text).toContain('Ties: 1.');
    // Each event: its verdict, and each check on each side.
    expect([...page.text.matchAll(/data-winner="(\w+)"/g)].map((m) => m[1])).toEqual([
      'candidate',
      'tie',
      'candidate',
    ]);
    expect(page.text).toContain(
      '<li class="check-ok">✓ <code>reply contains &#34;Ticket:&#34;</code></li>',
    );
    expect(page.text).toContain(
      '<li class="check-failed">✗ <code>reply contains &#34;Ticket:&#34;</code></li>',
    );

    // Changed only: the event answered "Hello!" both times is left out.
    expect(page.text).toContain('changed only (2)');
    const changed = await panel.page(`${trialPath}?changed=1`);
    expect([...changed.text.matchAll(/data-event="(\d+)"/g)]).toHaveLength(2);
    expect(changed.text).not.toContain('data-winner="tie"');

    // Promoted, the versions say what changed, with the diff folded under it.
    await panel.form(`${trialPath}/promote`).expect(303);
    const editor = await panel.page(`/channels/${id}`);
    expect(editor.text).toMatch(/<summary>Template, System prompt<\/summary>/);
    ai.defaultReply = {};
  });
});
