import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_EMAIL,
  ADMIN_ENV,
  ADMIN_PASSWORD,
  inviteAdmin,
  PanelClient,
  useSignedInAdmin,
} from '../panel/panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const owner = useSignedInAdmin(app);

interface Entry {
  id: string;
  at: string;
  workspace_id: string;
  actor: { kind: string; id: string | null; name: string };
  action: string;
  target: { kind: string; id: string | null };
  changes: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
}

const VERIFICATION_SECRET = 'whsec-audit-secret-value-8181';
const PROVIDER_KEY = 'sk-audit-provider-key-9393';

/** The newest entries of a query (the API's own answer, as an owner key reads it). */
async function audit(query: Record<string, string> = {}): Promise<Entry[]> {
  const res = await driver.api('get', '/audit').query({ limit: '200', ...query });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Entry[];
}

/** The newest entry of an action, which must exist. */
async function newest(action: string): Promise<Entry> {
  const [entry] = await audit({ action });
  expect(entry, `an entry ${action}`).toBeDefined();
  return entry as Entry;
}

const ADMIN_API_KEY_ACTOR = { kind: 'api_key', id: null, name: 'ADMIN_API_KEY' };

let channel: ChannelJson;
let eventId: string;

beforeAll(async () => {
  channel = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
  const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 7 } });
  eventId = String(sent.body.event_id);
  await createWorker(app.ctx).runOnce();
});

describe('changes through the API', () => {
  it('records a channel created, updated (secrets only as changed), enabled, regenerated and restored', async () => {
    const created = await newest('channel.create');
    expect(created).toMatchObject({
      actor: ADMIN_API_KEY_ACTOR,
      target: { kind: 'channel', id: channel.id },
      changes: { name: { before: null, after: 'Orders' } },
    });
    expect(created.ip).toMatch(/127\.0\.0\.1/);

    const update = await driver.updateChannel(channel.id, {
      template: 'Order {{order.id}} arrived',
      verification: { scheme: 'header-secret', header: 'X-Token', secret: VERIFICATION_SECRET },
      accept_when: [{ path: 'payload.order.id', op: 'exists' }],
    });
    expect(update.status, update.text).toBe(200);
    const updated = await newest('channel.update');
    expect(updated.target).toEqual({ kind: 'channel', id: channel.id });
    expect(updated.changes).toEqual({
      template: { before: 'Order {{order.id}}', after: 'Order {{order.id}} arrived' },
      verification: {
        before: { scheme: 'none' },
        after: { scheme: 'header-secret', header: 'x-token' },
      },
      accept_when: { before: [], after: [{ path: 'payload.order.id', op: 'exists' }] },
      'verification.secret': '(changed)',
    });

    await driver.updateChannel(channel.id, { enabled: false }).expect(200);
    expect((await newest('channel.disable')).changes).toEqual({
      enabled: { before: true, after: false },
    });
    await driver.updateChannel(channel.id, { enabled: true }).expect(200);
    await newest('channel.enable');

    await driver.api('post', `/channels/${channel.id}/regenerate-url`).expect(200);
    expect((await newest('channel.regenerate_url')).changes).toEqual({ webhook_url: '(changed)' });
    await driver.api('post', `/channels/${channel.id}/reply-secret/rotate`).expect(200);
    expect((await newest('channel.rotate_reply_secret')).changes).toEqual({
      reply_secret: '(changed)',
    });
    await driver.api('post', `/channels/${channel.id}/versions/1/restore`).expect(200);
    expect((await newest('channel.restore')).changes).toMatchObject({
      restored_version: 1,
      template: { before: 'Order {{order.id}} arrived', after: 'Order {{order.id}}' },
    });

    const gone = await driver.createChannel({ name: 'Gone soon' });
    await driver.api('delete', `/channels/${gone.id}`).expect(204);
    expect((await newest('channel.delete')).target).toEqual({ kind: 'channel', id: gone.id });

    const everything = JSON.stringify(await audit());
    expect(everything).not.toContain(VERIFICATION_SECRET);
  });

  it('records providers, tools, prices, keys, the workspace and alerts, never a secret', async () => {
    const provider = await driver
      .api('post', '/providers')
      .send({ name: 'office', kind: 'echo', api_key: PROVIDER_KEY })
      .expect(201);
    expect((await newest('provider.create')).changes).toMatchObject({
      name: { before: null, after: 'office' },
      api_key: '(changed)',
    });
    await driver
      .api('patch', `/providers/${provider.body.id}`)
      .send({ name: 'office-2', api_key: `${PROVIDER_KEY}-2` })
      .expect(200);
    expect((await newest('provider.update')).changes).toEqual({
      name: { before: 'office', after: 'office-2' },
      api_key: '(changed)',
    });
    await driver.api('delete', `/providers/${provider.body.id}`).expect(204);
    await newest('provider.delete');

    const tool = await driver
      .api('post', '/tools')
      .send({
        name: 'lookup',
        kind: 'mcp',
        description: 'Looks orders up',
        url: 'https://mcp.example.com/mcp',
        allowed_tools: ['find'],
        headers: { 'X-Tool-Key': 'tool-header-key-6262' },
      })
      .expect(201);
    expect((await newest('tool.create')).changes).toMatchObject({
      name: { before: null, after: 'lookup' },
      headers: '(changed)',
    });
    await driver
      .api('patch', `/tools/${tool.body.id}`)
      .send({ description: 'Finds orders' })
      .expect(200);
    expect((await newest('tool.update')).changes).toEqual({
      description: { before: 'Looks orders up', after: 'Finds orders' },
    });
    await driver.api('delete', `/tools/${tool.body.id}`).expect(204);
    await newest('tool.delete');

    await driver
      .api('put', '/prices/gpt-audit')
      .send({ input_per_mtok: 1, output_per_mtok: 2 })
      .expect(200);
    expect(await newest('price.create')).toMatchObject({
      target: { kind: 'price', id: 'gpt-audit' },
      changes: { input_per_mtok: { before: null, after: 1 } },
    });
    await driver.api('delete', '/prices/gpt-audit').expect(204);
    await newest('price.delete');

    const key = await driver.api('post', '/api-keys').send({ name: 'ci', role: 'editor' });
    expect(key.status).toBe(201);
    expect((await newest('api_key.create')).changes).toEqual({
      name: 'ci',
      role: 'editor',
      key: '(changed)',
    });
    // What a key changes is done by that key.
    const ci = new Driver(app, key.body.key as string);
    await ci.updateChannel(channel.id, { name: 'Orders (CI)' }).expect(200);
    expect((await newest('channel.update')).actor).toEqual({
      kind: 'api_key',
      id: key.body.id,
      name: 'ci',
    });
    await driver.api('delete', `/api-keys/${key.body.id}`).expect(204);
    expect((await newest('api_key.revoke')).target).toEqual({ kind: 'api_key', id: key.body.id });

    await driver.setWorkspace({ chat_quota: 777, monthly_budget_usd: 12.5 }).expect(200);
    expect((await newest('workspace.update')).changes).toMatchObject({
      chat_quota: { after: 777 },
      monthly_budget_usd: { before: null, after: 12.5 },
    });

    const alert = await driver
      .api('post', '/alerts')
      .send({
        name: 'failures',
        condition: { type: 'failure_rate', threshold: 0.5, window_s: 300, min_events: 10 },
        notify: { kind: 'webhook', url: 'https://hooks.example.com/alert?token=alert-token-77' },
      })
      .expect(201);
    expect((await newest('alert.create')).changes).toMatchObject({ notify: '(changed)' });
    await driver.api('patch', `/alerts/${alert.body.id}`).send({ enabled: false }).expect(200);
    await newest('alert.disable');
    await driver.api('delete', `/alerts/${alert.body.id}`).expect(204);
    await newest('alert.delete');

    const everything = JSON.stringify(await audit());
    for (const secret of [PROVIDER_KEY, 'tool-header-key-6262', 'alert-token-77', key.body.key])
      expect(everything).not.toContain(secret);
  });

  it('records replays, a bulk replay and trials with their promote', async () => {
    await driver.api('post', `/events/${eventId}/replay`).expect(202);
    expect(await newest('event.replay')).toMatchObject({
      target: { kind: 'event', id: eventId },
      changes: { status: { after: 'pending' } },
    });
    await createWorker(app.ctx).runOnce();
    const bulk = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, dry_run: false });
    expect(bulk.status, bulk.text).toBe(200);
    expect((await newest('event.replay_bulk')).changes).toMatchObject({
      count: bulk.body.count,
    });
    await createWorker(app.ctx).runOnce();

    const trial = await driver
      .api('post', `/channels/${channel.id}/trials`)
      .send({ template: 'Trial {{order.id}}', events: { last: 1 } });
    expect(trial.status, trial.text).toBe(202);
    expect(await newest('trial.create')).toMatchObject({
      target: { kind: 'trial', id: trial.body.id },
      changes: { channel_id: channel.id, candidate: { template: 'Trial {{order.id}}' } },
    });
    await driver.api('post', `/trials/${trial.body.id}/promote`).expect(200);
    expect(await newest('trial.promote')).toMatchObject({
      target: { kind: 'trial', id: trial.body.id },
      changes: { channel_id: channel.id, template: { after: 'Trial {{order.id}}' } },
    });
  });
});

describe('changes through the panel and sessions', () => {
  it('names the signed-in admin, and records sign-ins, failed sign-ins and sign-outs', async () => {
    const signIn = await newest('session.sign_in');
    expect(signIn).toMatchObject({
      actor: { kind: 'admin', name: ADMIN_EMAIL },
      target: { kind: 'admin' },
      changes: { via: 'password' },
      workspace_id: app.ctx.defaultWorkspaceId,
    });
    const adminId = signIn.actor.id as string;

    const created = await owner.createChannel('From the panel');
    expect(await newest('channel.create')).toMatchObject({
      actor: { kind: 'admin', id: adminId, name: ADMIN_EMAIL },
      target: { kind: 'channel', id: created },
    });
    expect((await newest('channel.create')).ip).toMatch(/127\.0\.0\.1/);

    const stranger = new PanelClient(app);
    expect((await stranger.signIn(ADMIN_EMAIL, 'not the password')).status).toBe(401);
    expect(await newest('session.sign_in_failed')).toMatchObject({
      actor: { kind: 'admin', id: adminId },
      target: { kind: 'admin', id: adminId },
    });
    const failedBefore = (await audit({ action: 'session.sign_in_failed' })).length;
    expect((await stranger.signIn('nobody@example.com', 'whatever1')).status).toBe(401);
    expect(await audit({ action: 'session.sign_in_failed' })).toHaveLength(failedBefore);

    const again = new PanelClient(app);
    expect((await again.signIn(ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(303);
    expect((await again.form('/logout')).status).toBe(303);
    expect(await newest('session.sign_out')).toMatchObject({
      actor: { kind: 'admin', id: adminId },
      workspace_id: app.ctx.defaultWorkspaceId,
    });
  });

  it('records invitations, their use and role changes', async () => {
    const guest = await inviteAdmin(owner, 'reader@example.com', 'reader password 1', 'viewer');
    expect(await newest('invitation.create')).toMatchObject({
      changes: { email: 'reader@example.com', role: 'viewer' },
    });
    const accepted = await newest('invitation.accept');
    expect(accepted.actor).toMatchObject({ kind: 'admin', name: 'reader@example.com' });
    const guestId = accepted.actor.id as string;
    await newest('session.sign_in');

    await driver.api('patch', `/admins/${guestId}`).send({ role: 'editor' }).expect(200);
    expect(await newest('admin.role')).toMatchObject({
      target: { kind: 'admin', id: guestId },
      changes: { role: { before: 'viewer', after: 'editor' } },
    });
    // An editor may not read the log, in the panel nor with a key of that role.
    expect((await guest.page('/audit')).status).toBe(403);
    const editorKey = await driver.api('post', '/api-keys').send({ name: 'e', role: 'editor' });
    const editor = await new Driver(app, editorKey.body.key as string).api('get', '/audit');
    expect([editor.status, editor.body.code, editor.body.required_role]).toEqual([
      403,
      'forbidden_role',
      'owner',
    ]);
    const viewerKey = await driver.api('post', '/api-keys').send({ name: 'v', role: 'viewer' });
    const viewer = new Driver(app, viewerKey.body.key as string);
    for (const path of ['/audit', '/audit/export'])
      expect((await viewer.api('get', path)).body.code).toBe('forbidden_role');

    await driver.api('delete', `/admins/${guestId}`).expect(204);
    expect((await newest('admin.remove')).target).toEqual({ kind: 'admin', id: guestId });
  });
});

describe('the log itself', () => {
  it('is append-only: the database refuses to update or delete a fresh entry', async () => {
    const entry = await newest('channel.create');
    const db = app.ctx.db;
    await expect(
      db.query(`update audit_entries set action = 'x' where id = $1`, [entry.id]),
    ).rejects.toThrow(/append-only/);
    await expect(db.query(`delete from audit_entries where id = $1`, [entry.id])).rejects.toThrow(
      /append-only/,
    );
    // Naming a retention in the session does not let a fresh entry go either.
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`select set_config('hookprompt.audit_retention_days', '1', true)`);
        await tx.query(`delete from audit_entries where id = $1`, [entry.id]);
      }),
    ).rejects.toThrow(/append-only/);
    await expect(db.query('truncate audit_entries')).rejects.toThrow(/append-only/);
    expect((await audit()).some((e) => e.id === entry.id)).toBe(true);
  });

  it('loses entries only to retention, past AUDIT_RETENTION_DAYS', async () => {
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into audit_entries (at, workspace_id, actor_kind, actor_name, action, target_kind)
       values (now() - interval '366 days', $1, 'system', 'system', 'ancient.thing', 'thing'),
              (now() - interval '364 days', $1, 'system', 'system', 'old.thing', 'thing')
       returning id::text`,
      [app.ctx.defaultWorkspaceId],
    );
    expect(rows).toHaveLength(2);
    // A delete outside retention is refused even for an old entry.
    await expect(
      app.ctx.db.query(`delete from audit_entries where id = $1`, [rows[0]?.id]),
    ).rejects.toThrow(/append-only/);
    expect(await app.ctx.auditRetention?.runOnce()).toBe(1);
    expect(await audit({ action: 'ancient.thing' })).toEqual([]);
    expect(await audit({ action: 'old.thing' })).toHaveLength(1);
  });

  it('commits or rolls back with the change it records', async () => {
    // A change that fails leaves no entry.
    const before = (await audit({ action: 'channel.update' })).length;
    const refused = await driver.updateChannel(channel.id, { ai: { provider: 'no-such' } });
    expect(refused.body.code).toBe('unknown_provider');
    expect(await audit({ action: 'channel.update' })).toHaveLength(before);

    // An entry that cannot be written undoes its change.
    await app.ctx.db.exec(`
      create function audit_test_refuse() returns trigger language plpgsql as $$
      begin raise exception 'audit write failed'; end $$;
      create trigger audit_test_refuse before insert on audit_entries for each row
        when (new.changes -> 'name' ->> 'after' = 'Never saved')
        execute function audit_test_refuse();`);
    try {
      const res = await driver.updateChannel(channel.id, { name: 'Never saved' });
      expect(res.status).toBe(500);
      const read = await driver.api('get', `/channels/${channel.id}`).expect(200);
      expect(read.body.name).not.toBe('Never saved');
    } finally {
      await app.ctx.db.exec(`drop trigger audit_test_refuse on audit_entries;
        drop function audit_test_refuse();`);
    }
  });

  it('filters by action, actor, target and time, newest first, page by page', async () => {
    const all = await audit();
    expect(all.map((e) => Number(e.id))).toEqual(
      [...all.map((e) => Number(e.id))].sort((a, b) => b - a),
    );
    const onChannel = await audit({ target_kind: 'channel', target_id: channel.id });
    expect(onChannel.length).toBeGreaterThan(3);
    expect(onChannel.every((e) => e.target.id === channel.id)).toBe(true);
    const adminId = (await newest('session.sign_in')).actor.id as string;
    const byAdmin = await audit({ actor_id: adminId });
    expect(byAdmin.length).toBeGreaterThan(0);
    expect(byAdmin.every((e) => e.actor.id === adminId)).toBe(true);
    expect(await audit({ from: '2999-01-01' })).toEqual([]);
    expect((await audit({ to: '2999-01-01' })).length).toBe(all.length);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '3', target_kind: 'channel' };
      if (cursor) query.cursor = cursor;
      const res = await driver.api('get', '/audit').query(query).expect(200);
      expect(res.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.data.map((e: Entry) => e.id));
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual((await audit({ target_kind: 'channel' })).map((e) => e.id));

    const bad = await driver.api('get', '/audit').query({ cursor: 'bm90LWEtY3Vyc29y' });
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_cursor']);
    const badLimit = await driver.api('get', '/audit').query({ limit: '0' });
    expect([badLimit.status, badLimit.body.code]).toEqual([400, 'validation_failed']);
  });

  it('exports a filter as JSON Lines', async () => {
    const res = await driver
      .api('get', '/audit/export')
      .query({ target_kind: 'channel' })
      .buffer(true)
      .parse((stream, done) => {
        let text = '';
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/jsonl/);
    const lines = (res.body as string)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Entry);
    expect(lines.map((e) => e.id)).toEqual(
      (await audit({ target_kind: 'channel' })).map((e) => e.id),
    );
  });

  it('has a panel page with the same filters, linked from the Workspace page for owners', async () => {
    const workspace = await owner.page('/workspace');
    expect(workspace.text).toContain('href="/audit"');
    const page = await owner.page(`/audit?action=channel.update&target_id=${channel.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="audit-filter"');
    expect(page.text).toContain('value="channel.update"');
    const rows = [...page.text.matchAll(/data-action="([^"]+)"/g)].map((m) => m[1]);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows)).toEqual(new Set(['channel.update']));
    const invalid = await owner.page('/audit?from=yesterday');
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('id="audit-errors"');
    const exported = await owner.page('/audit/export?action=channel.update');
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/jsonl/);

    const viewer = await inviteAdmin(owner, 'looker@example.com', 'looker password 1', 'viewer');
    expect((await viewer.page('/workspace')).text).not.toContain('href="/audit"');
    const refused = await viewer.page('/audit');
    expect(refused.status).toBe(403);
  });
});
