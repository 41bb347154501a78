import { beforeAll, describe, expect, it } from 'vitest';
import { createTrialWorker } from '../../src/trials/create-trial-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
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
    expect(page.text).toContain('{&#34;order&#34;:{&#34;id&#34;:2}}');
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
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
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
});
