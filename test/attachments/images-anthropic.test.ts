import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { useFakeAnthropic, useFixture, useTestApp } from '../support/harness.js';
import { TINY_JPEG, TINY_PNG, pngImage } from '../support/image-files.js';
import { ImageServer } from '../support/image-server.js';

const images = useFixture(() => ImageServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const api = useFakeAnthropic();
const { app, driver } = useTestApp({
  env: () => ({ ...api.env(), ATTACHMENTS_ALLOW_PRIVATE: 'true' }),
});

afterEach(() => app.ctx.db.query('delete from events'));

describe('images from the payload, sent to Anthropic', () => {
  it('sends each image as a base64 block before the prompt’s text; history as text', async () => {
    const res = await driver.api('post', '/channels').send({
      name: 'Receipts',
      template: 'Read this receipt: {{note}}',
      ai: {
        images: ['payload.receipt', 'payload.back'],
        system_prompt: 'You read receipts.',
        thread_key: '{{customer}}',
        history: 3,
      },
    });
    expect(res.status).toBe(201);
    const channel = res.body as ChannelJson;
    const receipt = images.serve('/receipt.jpg', { type: 'image/jpeg', body: TINY_JPEG });
    const back = images.serve('/back.png', { type: 'image/png; charset=binary', body: TINY_PNG });

    const send = async (note: string) => {
      const sent = await driver.sendEvent(channel.webhook_url, {
        customer: 'c1',
        note,
        receipt,
        back,
      });
      expect(sent.status).toBe(200);
      await createWorker(app.ctx).runOnce();
      return sent.body.event_id as string;
    };
    await send('first');
    const id = await send('second');

    const imageBlocks = [
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/jpeg', data: TINY_JPEG.toString('base64') },
      },
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: TINY_PNG.toString('base64') },
      },
    ];
    expect(api.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [...imageBlocks, { type: 'text', text: 'Read this receipt: first' }],
      },
    ]);
    // The earlier event is history: its text only, its last block closing the cached prefix.
    expect(api.requests[1]?.body.messages).toEqual([
      { role: 'user', content: 'Read this receipt: first' },
      {
        role: 'assistant',
        content: [
          {
            type: 'text',
            text: 'Fake model reply to: Read this receipt: first',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
      {
        role: 'user',
        content: [...imageBlocks, { type: 'text', text: 'Read this receipt: second' }],
      },
    ]);
    const event = (await driver.api('get', `/events/${id}`).expect(200)).body;
    expect(event).toMatchObject({
      status: 'replied',
      reply: 'Fake model reply to: Read this receipt: second',
    });
    expect(event.attachments).toEqual([
      {
        path: 'payload.receipt',
        url: receipt,
        media_type: 'image/jpeg',
        bytes: TINY_JPEG.length,
        status: 'ok',
        error: null,
      },
      {
        path: 'payload.back',
        url: back,
        media_type: 'image/png',
        bytes: TINY_PNG.length,
        status: 'ok',
        error: null,
      },
    ]);
  });

  it('sends large images byte for byte, with a length announced or sent in chunks', async () => {
    const res = await driver.api('post', '/channels').send({
      name: 'Photos',
      template: 'What is in these photos?',
      ai: { images: ['payload.photos'] },
    });
    expect(res.status).toBe(201);
    const channel = res.body as ChannelJson;
    // Random pixels do not compress: about 300 KB each, their base64 several times 64 KB.
    const noise = () => pngImage(300, 300, () => [rand(), rand(), rand()]);
    const [first, second] = [noise(), noise()];
    const photos = [
      images.serve('/first.png', { type: 'image/png', body: first }),
      images.serve('/second.png', { type: 'image/png', body: second, chunked: true }),
    ];
    const sent = await driver.sendEvent(channel.webhook_url, { photos });
    expect(sent.status).toBe(200);
    await createWorker(app.ctx).runOnce();

    expect(api.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          ...[first, second].map((png) => ({
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') },
          })),
          { type: 'text', text: 'What is in these photos?' },
        ],
      },
    ]);
    const event = (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
    expect(event.status).toBe('replied');
    expect(event.attachments.map((a: { bytes: number }) => a.bytes)).toEqual([
      first.length,
      second.length,
    ]);
  });
});

function rand(): number {
  return Math.floor(Math.random() * 256);
}
