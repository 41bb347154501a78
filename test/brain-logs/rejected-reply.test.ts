import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, PanelClient, unescapeHtml } from '../panel/panel-client.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, AI_MAX_ATTEMPTS: '2', WORKER_RETRY_BASE_MS: '0' },
});
let client: PanelClient;

beforeAll(async () => {
  client = new PanelClient(app);
  await client.signIn();
});

afterEach(() => app.ctx.db.query('delete from events'));

const BAD = 'Sure! here is it: {oops';

async function jsonChannel(extra: Record<string, unknown> = {}, template = 'Order {{id}}') {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Orders', template, ai: { response_format: 'json', ...extra } });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

/** Receives one event and lets the worker take it `attempts` times. */
async function asked(channel: ChannelJson, attempts: number, payload: unknown = { id: 7 }) {
  const res = await driver.sendEvent(channel.webhook_url, payload);
  expect(res.status).toBe(200);
  const id = res.body.event_id as string;
  const worker = createWorker(app.ctx);
  for (let i = 0; i < attempts; i++) await worker.runOnce();
  return id;
}

const apiEvent = async (id: string) =>
  (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;

/** The refused answer as the outcome shows it, and its heading, or undefined when not shown. */
function refusedIn(html: string): { heading: string; text: string } | undefined {
  const match =
    /<h3>What the model answered <span class="small muted">\(refused: ([^<]*)\)<\/span><\/h3>\s*<button type="button" class="button small" data-copy="#rejected-reply">Copy<\/button>\s*<\/div>\s*<pre class="event-reply" id="rejected-reply" tabindex="0">([^<]*)<\/pre>/.exec(
      html,
    );
  return match ? { heading: unescapeHtml(match[1]!), text: unescapeHtml(match[2]!) } : undefined;
}

/** The event page and the detail beside the list, each checked the same way. */
async function bothViews(id: string) {
  const page = await client.page(`/logs/${id}`).expect(200);
  const panel = await client.page(`/logs/${id}/panel`).expect(200);
  return [refusedIn(page.text), refusedIn(panel.text)];
}

describe('a reply refused as reply_invalid in Brain Logs', () => {
  it('shows what the model answered on the event page and the detail, never in the API', async () => {
    const channel = await jsonChannel();
    ai.defaultReply = { body: chatCompletion(BAD) };
    const id = await asked(channel, 1);

    // Waiting for its retry, the event already shows the answer refused.
    const waiting = await apiEvent(id);
    expect(waiting).toMatchObject({ status: 'pending', reply: null });
    expect(waiting.error).toMatch(/^reply_invalid: the reply is not JSON/);
    const [onPage] = await bothViews(id);
    expect(onPage?.text).toBe(BAD);

    await createWorker(app.ctx).runOnce();
    const failed = await apiEvent(id);
    expect(failed).toMatchObject({ status: 'failed', reply: null, attempts: 2 });
    expect(failed.error).toMatch(/^reply_invalid: the reply is not JSON .* Gave up after 2/);
    const reason = ((failed.calls as { error: string }[])[1]?.error ?? '').slice(
      'reply_invalid: '.length,
    );
    expect(reason).toMatch(/^the reply is not JSON/);
    for (const shown of await bothViews(id)) expect(shown).toEqual({ heading: reason, text: BAD });

    // The API's event keeps the contract's shape: the same fields as a replied event's.
    ai.defaultReply = { body: chatCompletion('{"ok": true}') };
    const replied = await apiEvent(await asked(channel, 1));
    expect(replied.status).toBe('replied');
    expect(Object.keys(failed).sort()).toEqual(Object.keys(replied).sort());
    const exported = await driver.api('get', `/events/export?format=jsonl`).expect(200);
    const line = exported.text.split('\n').find((row) => row.includes(`"id":"${id}"`));
    expect(Object.keys(JSON.parse(line!) as object).sort()).toEqual(Object.keys(failed).sort());
  });

  it('keeps the answer its last retry refused when its next call was cut short', async () => {
    const channel = await jsonChannel();
    ai.defaultReply = { body: chatCompletion(BAD) };
    const id = await asked(channel, 1);
    // As if the worker holding its second (last) call had died mid-call: no attempt is left.
    await app.ctx.db.query('update events set attempts = 2 where id = $1', [id]);
    await createWorker(app.ctx).runOnce();
    expect(ai.requests).toHaveLength(1);
    expect(await apiEvent(id)).toMatchObject({ status: 'failed', attempts: 2 });
    for (const shown of await bothViews(id)) expect(shown?.text).toBe(BAD);
  });

  it('lays out an answer that is JSON of the wrong shape, and cuts a long one to 8 KB', async () => {
    const channel = await jsonChannel();
    ai.defaultReply = { body: chatCompletion('[1, {"a": 2}]') };
    const listed = await asked(channel, 2);
    const [shown] = await bothViews(listed);
    expect(shown).toEqual({
      heading: 'the reply is JSON but not an object',
      text: '[\n  1,\n  {\n    "a": 2\n  }\n]',
    });

    ai.defaultReply = { body: chatCompletion(`${'x'.repeat(9000)} and more`) };
    const long = await asked(channel, 2);
    const [cut] = await bothViews(long);
    expect(cut?.text).toBe(`${'x'.repeat(8192)}…`);
  });

  it('drops the refused answer once a later attempt replies, or the event is replayed', async () => {
    const channel = await jsonChannel();
    ai.enqueue({ body: chatCompletion(BAD) }, { body: chatCompletion('{"a": 1}') });
    const id = await asked(channel, 1);
    expect((await bothViews(id))[0]?.text).toBe(BAD);
    await createWorker(app.ctx).runOnce();
    expect(await apiEvent(id)).toMatchObject({ status: 'replied', reply: '{"a": 1}', error: null });
    expect(await bothViews(id)).toEqual([undefined, undefined]);
    const { rows } = await app.ctx.db.query('select rejected_reply from events where id = $1', [
      id,
    ]);
    expect(rows[0]).toEqual({ rejected_reply: null });

    // A replayed event starts again without the answer its last run refused.
    ai.defaultReply = { body: chatCompletion(BAD) };
    const failed = await asked(channel, 2);
    expect((await apiEvent(failed)).status).toBe('failed');
    await driver.api('post', `/events/${failed}/replay`).expect(202);
    const replayed = await apiEvent(failed);
    expect(replayed).toMatchObject({ status: 'pending', error: null });
    const again = await app.ctx.db.query('select rejected_reply from events where id = $1', [
      failed,
    ]);
    expect(again.rows[0]).toEqual({ rejected_reply: null });
  });

  it('keeps the refused answer restored, as a reply is, when the guardrails restore', async () => {
    const channel = await jsonChannel(
      { redact: ['email'], restore: true },
      'Write to {{customer.email}}',
    );
    ai.defaultReply = { body: chatCompletion('Sure! I will mail [EMAIL_1]: {oops') };
    const id = await asked(channel, 2, { customer: { email: 'ada@example.com' } });
    expect((ai.requests[0]?.body as { messages: { content: string }[] }).messages).toEqual([
      { role: 'user', content: 'Write to [EMAIL_1]' },
    ]);
    expect(await apiEvent(id)).toMatchObject({ status: 'failed', redactions: { email: 1 } });
    for (const shown of await bothViews(id)) {
      expect(shown?.text).toBe('Sure! I will mail ada@example.com: {oops');
    }
  });
});
