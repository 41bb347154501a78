import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp({ ai: true });

async function patch(id: string, changes: Record<string, unknown>) {
  const res = await driver.updateChannel(id, changes);
  expect(res.status, res.text).toBe(200);
  return res.body as { version: number; template: string; ai: Record<string, unknown> };
}

describe('channel versions', () => {
  it('makes a version for each change of the template or ai, and none for other changes', async () => {
    const channel = await driver.createChannel({ name: 'Versions', template: 'v1 {{n}}' });
    expect(channel).toMatchObject({ version: 1 });
    expect((await patch(channel.id, { name: 'Renamed', enabled: false })).version).toBe(1);
    expect((await patch(channel.id, { template: 'v2 {{n}}' })).version).toBe(2);
    expect((await patch(channel.id, { ai: { temperature: 0.5 } })).version).toBe(3);
    // The same template and ai again change nothing.
    expect(
      (await patch(channel.id, { template: 'v2 {{n}}', ai: { temperature: 0.5 } })).version,
    ).toBe(3);

    const versions = await driver.api('get', `/channels/${channel.id}/versions`).expect(200);
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(versions.body.data[0]).toMatchObject({
      version: 3,
      template: 'v2 {{n}}',
      ai: expect.objectContaining({ temperature: 0.5, model: null }),
      created_at: expect.stringMatching(/Z$/),
    });
    expect(versions.body.data[2]).toMatchObject({
      template: 'v1 {{n}}',
      ai: expect.objectContaining({ temperature: null }),
    });
  });

  it('restores a version as a new one, with its template and ai', async () => {
    const channel = await driver.createChannel({ name: 'Restore', template: 'first {{n}}' });
    await patch(channel.id, { template: 'second {{n}}', ai: { max_tokens: 50 } });
    const restored = await driver
      .api('post', `/channels/${channel.id}/versions/1/restore`)
      .expect(200);
    expect(restored.body).toMatchObject({
      id: channel.id,
      version: 3,
      template: 'first {{n}}',
      ai: expect.objectContaining({ max_tokens: null }),
    });
    // Restoring what the channel has now makes no version.
    const again = await driver.api('post', `/channels/${channel.id}/versions/3/restore`);
    expect(again.body.version).toBe(3);
    for (const version of ['4', '0', 'abc']) {
      const res = await driver.api('post', `/channels/${channel.id}/versions/${version}/restore`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    await driver.api('get', '/channels/999999/versions').expect(404);
  });

  it('records on each event the version it was answered with, and Brain Logs filters by it', async () => {
    const channel = await driver.createChannel({ name: 'Answered', template: 'one {{n}}' });
    const first = await driver.sendEvent(channel.webhook_url, { n: 1 });
    await createWorker(app.ctx).runOnce();
    await patch(channel.id, { template: 'two {{n}}' });
    const second = await driver.sendEvent(channel.webhook_url, { n: 2 });
    await createWorker(app.ctx).runOnce();

    const event = async (id: unknown) =>
      (await driver.api('get', `/events/${String(id)}`).expect(200)).body;
    expect(await event(first.body.event_id)).toMatchObject({ version: 1, prompt: 'one 1' });
    expect(await event(second.body.event_id)).toMatchObject({ version: 2, prompt: 'two 2' });

    const listed = await driver
      .api('get', `/events?channel_id=${channel.id}&version=2`)
      .expect(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([second.body.event_id]);
    const bad = await driver.api('get', '/events?version=2');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/version/);
    expect((await driver.api('get', `/events?channel_id=${channel.id}&version=0`)).status).toBe(
      400,
    );
  });

  it('leaves a rejected event without a version', async () => {
    const channel = await driver.createChannel({ name: 'Refusing', allowed_ips: ['10.9.9.9'] });
    const refused = await driver.sendEvent(channel.webhook_url, { n: 1 });
    expect(refused.status).toBe(403);
    const listed = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ status: 'rejected', version: null }),
    ]);
  });
});
