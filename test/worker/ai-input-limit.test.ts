import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { type RecordedRequest } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const LIMIT = 1000;
const MARK = '…[truncated]';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, AI_MAX_INPUT_CHARS: String(LIMIT) },
});

type Message = { role: string; content: string };
const messagesOf = (request: RecordedRequest | undefined) =>
  (request?.body as { messages: Message[] }).messages;
const characters = (messages: Message[]) =>
  messages.reduce((sum, message) => sum + message.content.length, 0);

async function channel(input: Record<string, unknown>): Promise<ChannelJson> {
  const res = await driver.api('post', '/channels').send({ name: 'Limited', ...input });
  expect(res.status, res.text).toBe(201);
  return res.body as ChannelJson;
}

/** Sends one event and has the worker answer it; resolves to the event as the API shows it. */
async function answer(target: ChannelJson, body: unknown): Promise<Record<string, unknown>> {
  const sent = await driver.sendEvent(target.webhook_url, body);
  expect(sent.status).toBe(200);
  await createWorker(app.ctx).runOnce();
  return (await driver.api('get', `/events/${sent.body.event_id as string}`)).body;
}

describe('AI_MAX_INPUT_CHARS', () => {
  it('cuts a prompt over the limit with …[truncated] and says so on the event', async () => {
    const whole = await channel({ template: '{{.}}' });
    const event = await answer(whole, { text: 'x'.repeat(5000) });
    const messages = messagesOf(ai.requests[0]);
    expect(messages).toHaveLength(1);
    expect(characters(messages)).toBe(LIMIT);
    const prompt = messages[0]?.content as string;
    expect(prompt.startsWith('{"text":"xxx')).toBe(true);
    expect(prompt.endsWith(MARK)).toBe(true);
    // The event keeps what was sent.
    expect(event).toMatchObject({ status: 'replied', prompt, input_truncated: true });

    const untouched = await answer(whole, { text: 'short' });
    expect(untouched).toMatchObject({ prompt: '{"text":"short"}', input_truncated: false });

    // Brain Logs says so on the event's page.
    const panel = new PanelClient(app);
    await panel.signIn();
    expect((await panel.page(`/logs/${event.id as string}`)).text).toContain(
      'id="input-truncated"',
    );
    expect((await panel.page(`/logs/${untouched.id as string}`)).text).not.toContain(
      'id="input-truncated"',
    );
  });

  it('sends a prompt within the limit as it is', async () => {
    const small = await channel({ template: 'Order {{n}}' });
    const event = await answer(small, { n: 1 });
    expect(messagesOf(ai.requests[0])).toEqual([{ role: 'user', content: 'Order 1' }]);
    expect(event).toMatchObject({ prompt: 'Order 1', input_truncated: false });
  });

  it('drops the oldest history pairs first, then cuts the prompt', async () => {
    const thread = await channel({
      template: '{{text}}',
      ai: { thread_key: '{{conversation}}', history: 50 },
    });
    // Each exchange: a prompt of 100 characters and the fake model's reply to it (121).
    const texts = Array.from({ length: 6 }, (_, i) => `${i + 1}`.repeat(100));
    for (const text of texts.slice(0, 5)) await answer(thread, { conversation: 'c', text });
    ai.reset();

    const sixth = await answer(thread, { conversation: 'c', text: texts[5] });
    const messages = messagesOf(ai.requests[0]);
    expect(characters(messages)).toBeLessThanOrEqual(LIMIT);
    // 4 pairs fit beside the prompt (4 × 221 + 100); the oldest, the first, went.
    const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).toEqual(texts.slice(1, 6));
    expect(messages.at(-1)).toEqual({ role: 'user', content: texts[5] });
    expect(sixth).toMatchObject({ prompt: texts[5], input_truncated: true });

    ai.reset();
    const long = 'L'.repeat(3000);
    const seventh = await answer(thread, { conversation: 'c', text: long });
    const alone = messagesOf(ai.requests[0]);
    // No history fits beside this prompt, and the prompt itself is cut.
    expect(alone).toHaveLength(1);
    expect(alone[0]?.content).toBe(`${'L'.repeat(LIMIT - MARK.length)}${MARK}`);
    expect(seventh).toMatchObject({ input_truncated: true });
  });

  it('counts the system prompt in the limit', async () => {
    const system = await channel({
      template: '{{text}}',
      ai: { system_prompt: 'Rules: {{rules}}' },
    });
    const event = await answer(system, { rules: 'r'.repeat(3000), text: 't'.repeat(3000) });
    const messages = messagesOf(ai.requests[0]);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(characters(messages)).toBeLessThanOrEqual(LIMIT);
    expect(messages[0]?.content.endsWith(MARK)).toBe(true);
    expect(messages[1]?.content.endsWith(MARK)).toBe(true);
    // The prompt keeps at least half of what may be sent.
    expect(messages[1]?.content.length).toBeGreaterThanOrEqual(LIMIT / 2);
    expect(event).toMatchObject({ input_truncated: true });
  });
});
