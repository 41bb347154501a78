import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_EMAIL, ADMIN_ENV, PanelClient } from '../panel/panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

let channel: ChannelJson;
let eventId: string;

/** A driver of the management API with a new key of this role. */
async function keyOf(role: string): Promise<Driver> {
  const res = await driver.api('post', '/api-keys').send({ name: `${role} key`, role });
  expect(res.status, res.text).toBe(201);
  expect(res.body.role).toBe(role);
  return new Driver(app, res.body.key as string);
}

beforeAll(async () => {
  channel = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
  const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 7 } });
  eventId = String(sent.body.event_id);
  await createWorker(app.ctx).runOnce();
  expect((await driver.api('get', `/events/${eventId}`)).body.status).toBe('replied');
});

/** A request refused for its role: 403 problem+json naming the role it needs. */
async function expectRefused(who: Driver, method: Method, path: string, needs: string, body = {}) {
  const res = await who.api(method, path).send(body);
  expect([res.status, res.body.code, res.body.required_role], `${method} ${path}`).toEqual([
    403,
    'forbidden_role',
    needs,
  ]);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.detail).toContain(needs);
}

/** What a viewer could change if a refusal let a write through. */
async function workspaceState() {
  const read = async (path: string) => (await driver.api('get', path).expect(200)).body;
  return {
    channel: await read(`/channels/${channel.id}`),
    channels: await read('/channels'),
    events: (await read('/events')).data.length,
    workspace: await read('/workspace'),
    providers: await read('/providers'),
    tools: await read('/tools'),
    prices: await read('/prices'),
    alerts: await read('/alerts'),
    keys: (await read('/api-keys')).data.length,
    admins: await read('/admins'),
  };
}

describe('a viewer', () => {
  it('reads Brain Logs and every GET but the secrets', async () => {
    const viewer = await keyOf('viewer');
    const reads = [
      '/workspace',
      '/channels',
      `/channels/${channel.id}`,
      `/channels/${channel.id}/versions`,
      `/channels/${channel.id}/trials`,
      '/events',
      `/events/${eventId}`,
      '/events/export?format=jsonl',
      '/usage',
      '/spend',
      '/prices',
      '/providers',
      '/tools',
      '/api-keys',
      '/admins',
      '/alerts',
    ];
    for (const path of reads) expect((await viewer.api('get', path)).status, path).toBe(200);
    const logs = await viewer.api('get', `/events?channel_id=${channel.id}`);
    expect(logs.body.data.map((e: { id: string }) => String(e.id))).toContain(eventId);

    await expectRefused(viewer, 'get', `/channels/${channel.id}/reply-secret`, 'editor');
    await expectRefused(viewer, 'get', '/alerts/secret', 'owner');
  });

  it('changes nothing: a write of every area is refused with the role it needs', async () => {
    const viewer = await keyOf('viewer');
    const before = await workspaceState();
    const admins = before.admins.data as { id: string }[];
    const writes: [Method, string, string, Record<string, unknown>?][] = [
      ['post', '/channels', 'editor', { name: 'New', template: 'x' }],
      ['patch', `/channels/${channel.id}`, 'editor', { template: 'Changed' }],
      ['delete', `/channels/${channel.id}`, 'editor'],
      ['post', `/channels/${channel.id}/regenerate-url`, 'editor'],
      ['post', `/channels/${channel.id}/versions/1/restore`, 'editor'],
      ['post', `/channels/${channel.id}/reply-secret/rotate`, 'editor'],
      ['post', `/channels/${channel.id}/trials`, 'editor', { candidate: {} }],
      ['post', `/events/${eventId}/replay`, 'editor'],
      ['post', '/events/replay', 'editor', { dry_run: true }],
      ['post', '/events/replay', 'editor', { dry_run: false }],
      ['post', `/events/${eventId}/redeliver`, 'editor'],
      ['post', `/events/${eventId}/approval`, 'editor', { approve: true }],
      ['post', '/providers', 'owner', { name: 'p', kind: 'echo' }],
      ['delete', '/providers/1', 'owner'],
      ['post', '/tools', 'owner', { name: 't' }],
      ['put', '/prices/gpt-x', 'owner', { input_per_mtok: 1, output_per_mtok: 1 }],
      ['patch', '/workspace', 'owner', { monthly_budget_usd: 1 }],
      ['post', '/api-keys', 'owner', { name: 'mine', role: 'owner' }],
      ['delete', '/api-keys/1', 'owner'],
      ['patch', `/admins/${admins[0]?.id}`, 'owner', { role: 'viewer' }],
      ['delete', `/admins/${admins[0]?.id}`, 'owner'],
      ['post', '/invitations', 'owner', { email: 'me@example.com', role: 'owner' }],
      ['post', '/alerts', 'owner', { name: 'a' }],
    ];
    for (const [method, path, needs, body] of writes)
      await expectRefused(viewer, method, path, needs, body);
    expect(await workspaceState()).toEqual(before);
  });
});

describe('an editor', () => {
  it("changes a channel's template and replays, but not providers, keys, budgets or alerts", async () => {
    const editor = await keyOf('editor');
    const patched = await editor
      .api('patch', `/channels/${channel.id}`)
      .send({ template: 'Order {{order.id}}, again' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.template).toBe('Order {{order.id}}, again');
    const replayed = await editor.api('post', `/events/${eventId}/replay`);
    expect(replayed.status, replayed.text).toBe(202);
    const counted = await editor.api('post', '/events/replay').send({ dry_run: true });
    expect(counted.status, counted.text).toBe(200);
    expect((await editor.api('get', `/channels/${channel.id}/reply-secret`)).status).toBe(200);

    const workspace = (await driver.api('get', '/workspace')).body;
    await expectRefused(editor, 'post', '/providers', 'owner', { name: 'mine', kind: 'echo' });
    await expectRefused(editor, 'post', '/api-keys', 'owner', { name: 'mine' });
    await expectRefused(editor, 'patch', '/workspace', 'owner', { monthly_budget_usd: 1000 });
    await expectRefused(editor, 'post', '/alerts', 'owner', { name: 'a' });
    await expectRefused(editor, 'get', '/alerts/secret', 'owner');
    await expectRefused(editor, 'post', '/invitations', 'owner', { email: 'x@example.com' });
    expect((await driver.api('get', '/workspace')).body.monthly_budget_usd).toBe(
      workspace.monthly_budget_usd,
    );
  });
});

describe('API keys with a role', () => {
  it('are owners unless made with another role, which is listed with them', async () => {
    const made = await driver.api('post', '/api-keys').send({ name: 'No role given' });
    expect(made.body.role).toBe('owner');
    const owner = new Driver(app, made.body.key as string);
    expect((await owner.api('get', '/alerts/secret')).status).toBe(200);
    await keyOf('viewer');
    const listed = (await driver.api('get', '/api-keys')).body.data as { name: string }[];
    expect(listed.find((k) => k.name === 'No role given')).toMatchObject({ role: 'owner' });
    expect(listed.find((k) => k.name === 'viewer key')).toMatchObject({ role: 'viewer' });
    // ADMIN_API_KEY (the driver's) is an owner
    expect((await driver.api('get', '/alerts/secret')).status).toBe(200);
  });

  it('refuses a role that is none of owner, editor and viewer', async () => {
    for (const role of ['admin', 'OWNER', '', 3]) {
      const res = await driver.api('post', '/api-keys').send({ name: 'bad', role });
      expect([res.status, res.body.code], String(role)).toEqual([400, 'validation_failed']);
      expect(res.body.errors[0].path).toBe('role');
    }
  });
});

describe('admins with a role', () => {
  const admins = async () =>
    (await driver.api('get', '/admins').expect(200)).body.data as {
      id: string;
      email: string;
      role: string;
    }[];

  it('carries the role of the invitation on joining; editor by default', async () => {
    const plain = await driver.api('post', '/invitations').send({ email: 'ed@example.com' });
    expect([plain.status, plain.body.role]).toEqual([201, 'editor']);
    const invited = await driver
      .api('post', '/invitations')
      .send({ email: 'vi@example.com', role: 'viewer' });
    expect([invited.status, invited.body.role]).toEqual([201, 'viewer']);

    const guest = new PanelClient(app);
    // the link's page says the role it gives
    const link = await guest.page(new URL(invited.body.url as string).pathname);
    expect(link.text).toContain('<span id="invitation-role">a <strong>viewer</strong></span>');
    expect(
      (await guest.acceptInvitation(invited.body.url as string, 'viewer password')).status,
    ).toBe(303);
    expect((await admins()).find((a) => a.email === 'vi@example.com')?.role).toBe('viewer');
    // the panel holds them to it: they read a channel, and a form posted by hand is refused
    expect((await guest.page(`/channels/${channel.id}`)).status).toBe(200);
    const refused = await guest.form(`/channels/${channel.id}/disable`);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain(
      'This needs the editor role in this workspace; yours is viewer.',
    );
    expect((await driver.api('get', `/channels/${channel.id}`)).body.enabled).toBe(true);

    const bad = await driver
      .api('post', '/invitations')
      .send({ email: 'x@example.com', role: 'boss' });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });

  it('never removes or demotes the last owner, and changes roles through PATCH', async () => {
    const first = (await admins()).find((a) => a.email === ADMIN_EMAIL);
    expect(first?.role).toBe('owner');
    for (const role of ['editor', 'viewer']) {
      const res = await driver.api('patch', `/admins/${first?.id}`).send({ role });
      expect([res.status, res.body.code]).toEqual([409, 'last_owner']);
    }
    const removed = await driver.api('delete', `/admins/${first?.id}`);
    expect([removed.status, removed.body.code]).toEqual([409, 'last_owner']);

    // with a second owner, the first may step down; then the second is the last
    const vi = (await admins()).find((a) => a.email === 'vi@example.com');
    const promoted = await driver.api('patch', `/admins/${vi?.id}`).send({ role: 'owner' });
    expect([promoted.status, promoted.body]).toEqual([
      200,
      { id: vi?.id, email: 'vi@example.com', role: 'owner' },
    ]);
    expect(
      (await driver.api('patch', `/admins/${first?.id}`).send({ role: 'editor' })).status,
    ).toBe(200);
    const last = await driver.api('patch', `/admins/${vi?.id}`).send({ role: 'viewer' });
    expect([last.status, last.body.code]).toEqual([409, 'last_owner']);
    expect((await driver.api('delete', `/admins/${vi?.id}`)).body.code).toBe('last_owner');
    expect((await admins()).map((a) => [a.email, a.role])).toEqual([
      [ADMIN_EMAIL, 'editor'],
      ['vi@example.com', 'owner'],
    ]);

    const invalid = await driver.api('patch', `/admins/${first?.id}`).send({ role: 'root' });
    expect([invalid.status, invalid.body.code]).toEqual([400, 'validation_failed']);
    expect((await driver.api('patch', '/admins/999999').send({ role: 'viewer' })).status).toBe(404);
    // the first admin is an owner again for the tests after
    await driver.api('patch', `/admins/${first?.id}`).send({ role: 'owner' }).expect(200);
  });
});
