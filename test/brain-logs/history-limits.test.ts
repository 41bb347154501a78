import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true });

const PAGE_BYTES = 8 * 1024 * 1024;
const MARK = '…[truncated]';

interface Outcome {
  prompt: string | null;
  reply: string | null;
  replayed_at: string;
}

/** Replays the event and has the worker answer it again. */
async function replay(id: string): Promise<void> {
  const res = await driver.api('post', `/events/${id}/replay`);
  expect(res.status, res.text).toBe(202);
  await createWorker(app.ctx).runOnce();
}

describe('an event’s history of earlier outcomes', () => {
  it('keeps the last 20 outcomes when replayed 25 times', async () => {
    const channel = await driver.createChannel({ name: 'Again', template: 'Round {{n}}' });
    const sent = await driver.sendEvent(channel.webhook_url, { n: 1 });
    const id = sent.body.event_id as string;
    await createWorker(app.ctx).runOnce();
    let replies = 0;
    ai.defaultReply = () => ({ body: chatCompletion(`reply ${++replies}`) });
    for (let i = 0; i < 25; i++) await replay(id);

    const event = (await driver.api('get', `/events/${id}`)).body;
    expect(event.reply).toBe('reply 25');
    const history = event.history as Outcome[];
    expect(history).toHaveLength(20);
    // The first answer and the first five replays' answers went; the rest stay, oldest first.
    expect(history.map((outcome) => outcome.reply)).toEqual(
      Array.from({ length: 20 }, (_, i) => `reply ${i + 5}`),
    );
  });

  it('keeps a long earlier text as its start and a mark, so the event stays within 8 MB', async () => {
    const channel = await driver.createChannel({ name: 'Verbose', template: 'Tell {{n}}' });
    ai.reset();
    // Each answer is 1.5 MB; 12 replays would keep 18 MB of earlier replies.
    let round = 0;
    ai.defaultReply = () => ({ body: chatCompletion(`${++round}:${'w'.repeat(1_500_000)}`) });
    const sent = await driver.sendEvent(channel.webhook_url, { n: 1 });
    const id = sent.body.event_id as string;
    await createWorker(app.ctx).runOnce();
    for (let i = 0; i < 12; i++) await replay(id);

    const res = await driver.api('get', `/events/${id}`);
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.text)).toBeLessThan(PAGE_BYTES);
    const event = res.body as { reply: string; history: Outcome[] };
    expect(event.reply).toHaveLength(1_500_003);
    expect(event.history).toHaveLength(12);
    for (const [i, outcome] of event.history.entries()) {
      expect(outcome.reply).toBe(`${i + 1}:${'w'.repeat(10_000 - `${i + 1}:`.length)}${MARK}`);
      expect(outcome.prompt).toBe('Tell 1');
    }

    const page = await driver.api('get', `/events?channel_id=${channel.id}&limit=5`);
    expect(page.status).toBe(200);
    expect(Buffer.byteLength(page.text)).toBeLessThan(PAGE_BYTES);
    expect(page.body.data).toHaveLength(1);
  }, 60_000);
});
