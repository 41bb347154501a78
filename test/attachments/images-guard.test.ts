import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { TINY_JPEG, TINY_PNG } from '../support/image-files.js';
import { ImageServer } from '../support/image-server.js';

const images = useFixture(() => ImageServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
// The echo stand-in, and image URLs held to public addresses (ATTACHMENTS_ALLOW_PRIVATE unset).
const { app, driver } = useTestApp();

afterEach(() => app.ctx.db.query('delete from events'));

async function answered(ai: Record<string, unknown>, payload: Record<string, unknown>) {
  const res = await driver
    .api('post', '/channels')
    .send({ name: 'Shots', template: '{{text}}', ai });
  expect(res.status).toBe(201);
  const sent = await driver.sendEvent((res.body as ChannelJson).webhook_url, payload);
  expect(sent.status).toBe(200);
  await createWorker(app.ctx).runOnce();
  return (await driver.api('get', `/events/${sent.body.event_id}`).expect(200)).body;
}

describe('images from the payload: the address guard and the echo', () => {
  it('refuses an image on a loopback address at once, without asking for it', async () => {
    const url = images.serve('/inside.png', { type: 'image/png', body: TINY_PNG });
    const event = await answered({ images: ['payload.shot'] }, { text: 'look', shot: url });
    expect(event).toMatchObject({ status: 'failed', attempts: 1, reply: null });
    expect(event.error).toMatch(
      /^attachment_failed: payload\.shot: 127\.0\.0\.1 is a loopback, private, link-local or otherwise non-public address: refused unless the server is started with ATTACHMENTS_ALLOW_PRIVATE=true/,
    );
    expect(event.attachments).toMatchObject([{ path: 'payload.shot', url, status: 'error' }]);
    expect(images.hits.size).toBe(0);
  });

  it('refuses a host name that resolves to a loopback address', async () => {
    const url = images.serve('/named.png', { type: 'image/png', body: TINY_PNG });
    const named = url.replace('127.0.0.1', 'localhost');
    const event = await answered({ images: ['payload.shot'] }, { text: 'look', shot: named });
    expect(event).toMatchObject({ status: 'failed', attempts: 1 });
    expect(event.error).toMatch(/^attachment_failed: payload\.shot: localhost resolves to /);
    expect(images.hits.size).toBe(0);
  });

  it('names each image’s type and size in the echo’s reply (data URLs need no address)', async () => {
    const png = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
    const jpeg = `data:image/jpeg;name=a.jpg;base64,${TINY_JPEG.toString('base64')}`;
    const event = await answered(
      { images: ['payload.shots'] },
      { text: 'two', shots: [png, jpeg] },
    );
    expect(event).toMatchObject({ status: 'replied' });
    expect(event.reply).toBe(
      `[echo stand-in — no AI model configured] Would have sent 2 images (image/png, ${TINY_PNG.length} bytes; image/jpeg, ${TINY_JPEG.length} bytes). You wrote: two`,
    );
    expect(event.attachments).toEqual([
      {
        path: 'payload.shots[0]',
        url: null,
        media_type: 'image/png',
        bytes: TINY_PNG.length,
        status: 'ok',
        error: null,
      },
      {
        path: 'payload.shots[1]',
        url: null,
        media_type: 'image/jpeg',
        bytes: TINY_JPEG.length,
        status: 'ok',
        error: null,
      },
    ]);
  });

  it('refuses a data URL whose bytes are not of its type', async () => {
    const lie = `data:image/gif;base64,${TINY_PNG.toString('base64')}`;
    const event = await answered({ images: ['payload.shot'] }, { text: 'gif?', shot: lie });
    expect(event).toMatchObject({
      status: 'failed',
      error:
        'attachment_failed: payload.shot: sent as image/gif, but its first bytes are those of image/png',
      attachments: [{ path: 'payload.shot', url: null, status: 'error' }],
    });
  });

  it('checks the image paths of a channel', async () => {
    const bad = await driver
      .api('post', '/channels')
      .send({ name: 'x', template: 'x', ai: { images: ['shot'] } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('must start with payload.');
    const many = await driver.api('post', '/channels').send({
      name: 'x',
      template: 'x',
      ai: { images: ['payload.a', 'payload.b', 'payload.c', 'payload.d', 'payload.e'] },
    });
    expect(many.status).toBe(400);
    const ok = await driver
      .api('post', '/channels')
      .send({ name: 'x', template: 'x', ai: { images: ['payload.a'] } });
    expect(ok.body.ai.images).toEqual(['payload.a']);
  });
});
