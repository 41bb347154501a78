import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { TINY_JPEG, TINY_PNG, pngImage } from '../support/image-files.js';
import { ImageServer } from '../support/image-server.js';

const images = useFixture(() => ImageServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver, ai } = useTestApp({
  ai: true,
  env: {
    ATTACHMENTS_ALLOW_PRIVATE: 'true',
    ATTACHMENT_MAX_BYTES: '2kb',
    AI_MAX_ATTEMPTS: '3',
    WORKER_RETRY_BASE_MS: '0',
  },
});

afterEach(() => app.ctx.db.query('delete from events'));

const PNG = { type: 'image/png', body: TINY_PNG };
const JPEG = { type: 'image/jpeg', body: TINY_JPEG };
const base64 = (bytes: Buffer) => bytes.toString('base64');

async function channelWith(ai: Record<string, unknown>) {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Screenshots', template: 'Ticket: {{text}}', ai });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

async function receive(channel: ChannelJson, body: unknown) {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

async function event(id: string) {
  return (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;
}

/** Asks the worker once and returns the event as it then stands. */
async function answered(id: string) {
  await createWorker(app.ctx).runOnce();
  return event(id);
}

const userContent = (index = 0) =>
  (ai.requests[index]?.body as { messages: { role: string; content: unknown }[] }).messages.at(-1)
    ?.content;

describe('images from the payload, sent to an OpenAI-compatible server', () => {
  it('sends each image inline after the prompt, in path order, and says so on the event', async () => {
    const channel = await channelWith({ images: ['payload.shot', 'payload.more'] });
    const shot = images.serve('/shot.png', PNG);
    const photo = images.serve('/photo.jpg', JPEG);
    const inline = `data:image/png;base64,${base64(TINY_PNG)}`;
    const id = await receive(channel, {
      text: 'the button is grey',
      shot: `${shot}?signature=secret#top`,
      more: [photo, 'not an image', 42, inline],
    });

    const stored = await answered(id);
    expect(ai.requests[0]?.body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Ticket: the button is grey' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${base64(TINY_PNG)}` } },
            {
              type: 'image_url',
              image_url: { url: `data:image/jpeg;base64,${base64(TINY_JPEG)}` },
            },
            { type: 'image_url', image_url: { url: inline } },
          ],
        },
      ],
    });
    expect(stored).toMatchObject({ status: 'replied', attempts: 1, error: null });
    expect(stored.attachments).toEqual([
      {
        path: 'payload.shot',
        url: shot,
        media_type: 'image/png',
        bytes: TINY_PNG.length,
        status: 'ok',
        error: null,
      },
      {
        path: 'payload.more[0]',
        url: photo,
        media_type: 'image/jpeg',
        bytes: TINY_JPEG.length,
        status: 'ok',
        error: null,
      },
      {
        path: 'payload.more[3]',
        url: null,
        media_type: 'image/png',
        bytes: TINY_PNG.length,
        status: 'ok',
        error: null,
      },
    ]);
  });

  it('sends at most 4 images, and a payload without its image as text alone', async () => {
    const channel = await channelWith({ images: ['payload.list'] });
    const url = images.serve('/one.png', PNG);
    const id = await receive(channel, { text: 'many', list: [url, url, url, url, url] });
    const stored = await answered(id);
    expect(userContent()).toHaveLength(5);
    expect(stored.attachments).toHaveLength(4);
    expect(images.hits.get('/one.png')).toBe(4);

    const plain = await receive(channel, { text: 'no picture today' });
    expect(await answered(plain)).toMatchObject({ status: 'replied', attachments: [] });
    expect(userContent(1)).toBe('Ticket: no picture today');
  });

  it('sends earlier events of a thread as text only', async () => {
    const channel = await channelWith({
      images: ['payload.shot'],
      thread_key: '{{ticket}}',
      history: 5,
    });
    const shot = images.serve('/shot.png', PNG);
    await answered(await receive(channel, { ticket: 'T1', text: 'first', shot }));
    await answered(await receive(channel, { ticket: 'T1', text: 'second', shot }));
    const messages = (ai.requests[1]?.body as { messages: unknown[] }).messages;
    expect(messages).toEqual([
      { role: 'user', content: 'Ticket: first' },
      { role: 'assistant', content: 'Fake model reply to: Ticket: first' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Ticket: second' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${base64(TINY_PNG)}` } },
        ],
      },
    ]);
  });

  it('follows up to 3 redirects, and fails at once on a 4th or on another scheme', async () => {
    const channel = await channelWith({ images: ['payload.shot'] });
    images.serve('/final.png', PNG);
    images.serve('/r1', { status: 302, location: '/final.png' });
    images.serve('/r2', { status: 301, location: `${images.origin}/r1` });
    const three = images.serve('/r3', { status: 307, location: '/r2' });
    const four = images.serve('/r4', { status: 302, location: '/r3' });
    const ftp = images.serve('/ftp', { status: 302, location: 'ftp://127.0.0.1/final.png' });

    const followed = await answered(await receive(channel, { text: 'a', shot: three }));
    expect(followed).toMatchObject({ status: 'replied' });
    expect(followed.attachments).toMatchObject([{ url: three, status: 'ok' }]);

    const tooMany = await answered(await receive(channel, { text: 'b', shot: four }));
    expect(tooMany).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'attachment_failed: payload.shot: more than 3 redirects',
    });
    const otherScheme = await answered(await receive(channel, { text: 'c', shot: ftp }));
    expect(otherScheme).toMatchObject({ status: 'failed', attempts: 1 });
    expect(otherScheme.error).toMatch(/^attachment_failed: payload\.shot: a redirect to ftp:/);
    expect(ai.requests).toHaveLength(1);
  });

  it('fails the event at once, image fetched once, for a 4xx, a type lie or a large image', async () => {
    const channel = await channelWith({ images: ['payload.shot'] });
    const cases = [
      { path: '/gone.png', answer: { status: 404 }, error: 'answered 404' },
      {
        path: '/page',
        answer: { type: 'text/html', body: Buffer.from('<html></html>') },
        error: 'answered type text/html, not an image',
      },
      {
        path: '/lie.png',
        answer: { type: 'image/png', body: TINY_JPEG },
        error: 'sent as image/png, but its first bytes are those of image/jpeg',
      },
      {
        path: '/large.png',
        answer: { type: 'image/png', body: pngImage(40, 40, (x, y) => [x * 6, y * 6, x ^ y]) },
        error: 'larger than ATTACHMENT_MAX_BYTES (2048 bytes)',
      },
    ];
    for (const { path, answer, error } of cases) {
      const url = images.serve(path, answer);
      const stored = await answered(await receive(channel, { text: path, shot: url }));
      expect(stored).toMatchObject({
        status: 'failed',
        attempts: 1,
        error: `attachment_failed: payload.shot: ${error}`,
        calls: [],
      });
      expect(stored.attachments).toEqual([
        { path: 'payload.shot', url, media_type: null, bytes: null, status: 'error', error },
      ]);
      expect(images.hits.get(path)).toBe(1);
    }
    expect(ai.requests).toHaveLength(0);
  });

  it('retries an attempt whose image answered 5xx, as AI errors are', async () => {
    const channel = await channelWith({ images: ['payload.shot'] });
    const url = images.serve('/busy.png', { status: 503 }, PNG);
    const id = await receive(channel, { text: 'busy', shot: url });
    expect(await answered(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'An image could not be fetched: payload.shot: answered 503.',
      attachments: [{ status: 'error', error: 'answered 503' }],
    });
    expect(ai.requests).toHaveLength(0);
    expect(await answered(id)).toMatchObject({
      status: 'replied',
      attempts: 2,
      error: null,
      attachments: [{ status: 'ok', media_type: 'image/png' }],
    });
    expect(images.hits.get('/busy.png')).toBe(2);
  });
});
