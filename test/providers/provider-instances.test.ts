import { describe, expect, it } from 'vitest';
import { PROVIDERS_FRESH_MS, ProviderInstances } from '../../src/providers/provider-instances.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();

describe("a process's instances of a workspace's providers", () => {
  it('keeps one instance per unchanged provider, and takes a change made elsewhere within the freshness time', async () => {
    const created = await driver
      .api('post', '/providers')
      .send({ name: 'elsewhere', kind: 'echo' })
      .expect(201);
    // Another process's view: its own instances and clock; the API's changes do not reach it.
    let clock = 1_000_000;
    const other = new ProviderInstances(app.ctx.providers, undefined, () => clock);
    const workspace = app.ctx.defaultWorkspaceId;

    const first = (await other.of(workspace)).get('elsewhere');
    expect(first).toBeDefined();
    await driver
      .api('patch', `/providers/${created.body.id}`)
      .send({ name: 'renamed' })
      .expect(200);
    expect((await other.of(workspace)).get('elsewhere')).toBe(first);

    clock += PROVIDERS_FRESH_MS;
    const reloaded = await other.of(workspace);
    expect(reloaded.has('elsewhere')).toBe(false);
    const renamed = reloaded.get('renamed');
    expect(renamed).toBeDefined();
    expect(renamed).not.toBe(first);

    // Read again but unchanged: the same instance, so its Retry-After pause is kept.
    clock += PROVIDERS_FRESH_MS;
    expect((await other.of(workspace)).get('renamed')).toBe(renamed);

    // A change made through this process is used at its next call.
    await driver.api('delete', `/providers/${created.body.id}`).expect(204);
    other.forget(workspace);
    expect((await other.of(workspace)).has('renamed')).toBe(false);
  });
});
