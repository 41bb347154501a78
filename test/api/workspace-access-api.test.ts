import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_EMAIL, ADMIN_ENV, PanelClient, unescapeHtml } from '../panel/panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });

const workspaceWith = (key: string) =>
  request(app.baseUrl).get('/api/v1/workspace').set('Authorization', `Bearer ${key}`);

describe('API keys through the API', () => {
  it('creates a key shown once, lists it by its prefix only, and revokes it', async () => {
    const created = await driver.api('post', '/api-keys').send({ name: 'Deploy script' });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const { key, id, prefix } = created.body as { key: string; id: string; prefix: string };
    expect(created.body).toMatchObject({ name: 'Deploy script', revoked_at: null });
    expect(key).toMatch(/^hp_/);
    expect(key.startsWith(prefix)).toBe(true);
    expect((await workspaceWith(key)).status).toBe(200);

    const listed = await driver.api('get', '/api-keys').expect(200);
    const entry = (listed.body.data as Record<string, unknown>[]).find((k) => k.id === id);
    expect(entry).toMatchObject({ name: 'Deploy script', prefix, revoked_at: null });
    expect(entry?.last_used_at).toEqual(expect.any(String));
    // the key itself is never listed again
    expect(listed.text).not.toContain(key);
    expect(Object.keys(entry ?? {})).not.toContain('key');

    // the panel shows the same key
    const panel = new PanelClient(app);
    await panel.signIn();
    expect(unescapeHtml((await panel.page('/workspace')).text)).toContain('Deploy script');

    expect((await driver.api('delete', `/api-keys/${id}`)).status).toBe(204);
    expect((await workspaceWith(key)).status).toBe(401);
    const after = await driver.api('get', '/api-keys').expect(200);
    const revoked = (after.body.data as Record<string, unknown>[]).find((k) => k.id === id);
    expect(revoked?.revoked_at).toEqual(expect.any(String));
  });

  it('lets a key made through the API manage the workspace, and revoke itself', async () => {
    const { key, id } = (await driver.api('post', '/api-keys').send({ name: 'Short-lived' }))
      .body as { key: string; id: string };
    const own = new Driver(app, key);
    expect((await own.api('get', '/api-keys')).status).toBe(200);
    expect((await own.api('delete', `/api-keys/${id}`)).status).toBe(204);
    expect((await own.api('get', '/api-keys')).status).toBe(401);
  });

  it('refuses a key without a name, and answers 404 for an unknown key', async () => {
    const nameless = await driver.api('post', '/api-keys').send({ name: '  ' });
    expect(nameless.status).toBe(400);
    expect(nameless.body.code).toBe('validation_failed');
    expect((await driver.api('post', '/api-keys').send({})).status).toBe(400);
    for (const id of ['999999', 'abc'])
      expect((await driver.api('delete', `/api-keys/${id}`)).status, id).toBe(404);
  });
});

describe('admins and invitations through the API', () => {
  const adminIds = async () =>
    (
      (await driver.api('get', '/admins').expect(200)).body.data as { id: string; email: string }[]
    ).sort((a, b) => a.email.localeCompare(b.email));

  it('lists the admins, invites one whose link works once, and removes them', async () => {
    expect((await adminIds()).map((admin) => admin.email)).toEqual([ADMIN_EMAIL]);

    const invited = await driver.api('post', '/invitations').send({ email: 'ops@localhost' });
    expect(invited.status).toBe(201);
    const { url, expires_at } = invited.body as { url: string; expires_at: string };
    expect(url.startsWith(`${app.ctx.config.publicBaseUrl}/invitations/`)).toBe(true);
    const hours = (Date.parse(expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23);
    expect(hours).toBeLessThanOrEqual(24);

    const guest = new PanelClient(app);
    expect((await guest.acceptInvitation(url, 'the ops password')).status).toBe(303);
    expect((await guest.page('/channels')).status).toBe(200);
    expect((await new PanelClient(app).acceptInvitation(url, 'again')).status).toBe(410);

    const admins = await adminIds();
    expect(admins.map((admin) => admin.email)).toEqual([ADMIN_EMAIL, 'ops@localhost']);
    const ops = admins.find((admin) => admin.email === 'ops@localhost');
    expect((await driver.api('delete', `/admins/${ops?.id}`)).status).toBe(204);
    expect((await adminIds()).map((admin) => admin.email)).toEqual([ADMIN_EMAIL]);
    // no longer an admin of the workspace: their panel sends them to make one of their own
    const after = await guest.page('/channels');
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/workspaces/new');
  });

  it('never removes the last owner of a workspace', async () => {
    const [only] = await adminIds();
    const res = await driver.api('delete', `/admins/${only?.id}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('last_owner');
    expect(await adminIds()).toEqual([only]);
    const panel = new PanelClient(app);
    expect((await panel.signIn()).status).toBe(303);
    expect((await panel.page('/channels')).status).toBe(200);
  });

  it('answers an address that has an account with a link too, which adds it only once followed', async () => {
    const first = await driver.api('post', '/invitations').send({ email: 'back@example.com' });
    const guest = new PanelClient(app);
    expect((await guest.acceptInvitation(first.body.url as string, 'back password')).status).toBe(
      303,
    );
    const back = (await adminIds()).find((admin) => admin.email === 'back@example.com');
    expect((await driver.api('delete', `/admins/${back?.id}`)).status).toBe(204);

    // an account exists for the address now: still a link, and nobody is added by asking for it
    const again = await driver.api('post', '/invitations').send({ email: 'BACK@example.com' });
    expect(again.status).toBe(201);
    expect(again.body.url).toMatch(/\/invitations\/[\w-]+$/);
    expect(typeof again.body.expires_at).toBe('string');
    expect((await adminIds()).map((admin) => admin.email)).not.toContain('back@example.com');
  });

  it('refuses what is not an e-mail address, and unknown admins', async () => {
    const bad = await driver.api('post', '/invitations').send({ email: 'not an address' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({ path: 'email', message: expect.stringContaining('e-mail') }),
    ]);
    for (const id of ['999999', 'abc'])
      expect((await driver.api('delete', `/admins/${id}`)).status, id).toBe(404);
  });

  it('needs a key', async () => {
    for (const [method, path] of [
      ['get', '/api/v1/admins'],
      ['post', '/api/v1/invitations'],
      ['get', '/api/v1/api-keys'],
    ] as const)
      expect((await request(app.baseUrl)[method](path)).status).toBe(401);
  });
});
