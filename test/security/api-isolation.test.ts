import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { readOpenApiDocument } from '../../src/api/openapi-routes.js';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { createTrialWorker } from '../../src/trials/create-trial-worker.js';
import { Driver } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

// One app with a panel admin; two workspaces (tenants) made in it in beforeAll below.
const { app } = useTestApp({ env: ADMIN_ENV });

/** One workspace as its owner sees it. */
interface Tenant {
  name: string;
  workspaceId: string;
  key: string;
  channelId: string;
  webhookUrl: string;
  eventId: string;
  /** A key of its own in the api_keys table, and an admin of this workspace only. */
  keyId: string;
  adminId: string;
  providerId: string;
  toolId: string;
  alertId: string;
  trialId: string;
}

/** What an intruder asks of one route, given the victim's ids. */
interface RouteCase {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** As in docs/openapi.yaml. */
  route: string;
  path: (victim: Tenant) => string;
  body?: object | ((victim: Tenant) => object);
  /** Ids that do not belong to the caller are unknown to it: 404. */
  status: number;
  /** For a 200/201: what the caller got is its own (or nothing). */
  check?: (body: Record<string, unknown>, caller: Tenant, victim: Tenant) => void;
}

/** Its URL never resolves: saved without TOOLS_ALLOW_PRIVATE, and never called here. */
const toolBody = (name: string) => ({
  name,
  kind: 'http',
  description: 'Looks an order up',
  url: 'https://tools.invalid/orders/{{input.id}}',
  input_schema: { type: 'object', properties: { id: { type: 'string' } } },
  headers: { 'X-Key': 'tool-key-of-the-owner' },
});

const ALERT = {
  name: 'Queue stuck',
  condition: { type: 'queue_age', seconds: 600 },
  notify: { kind: 'webhook', url: 'https://alerts.example.com/hook' },
};
/** Each workspace's alert secret, read by its own key before the intruders come. */
const alertSecrets = new Map<string, string>();

const listIds = (body: Record<string, unknown>) =>
  (body.data as { id: string; channel_id?: string }[]).map((item) => item);

const ROUTES: RouteCase[] = [
  {
    method: 'get',
    route: '/api/v1/workspace',
    path: () => '/workspace',
    status: 200,
    check: (body, caller) =>
      expect(body).toMatchObject({ id: caller.workspaceId, name: caller.name }),
  },
  {
    method: 'patch',
    route: '/api/v1/workspace',
    path: () => '/workspace',
    body: { chat_quota: 1, chats_used: 0 },
    status: 200,
    check: (body, caller) => expect(body).toMatchObject({ id: caller.workspaceId, chat_quota: 1 }),
  },
  {
    method: 'get',
    route: '/api/v1/channels',
    path: () => '/channels',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((c) => c.id);
      expect(ids).toContain(caller.channelId);
      expect(ids).not.toContain(victim.channelId);
    },
  },
  {
    method: 'get',
    route: '/api/v1/providers',
    path: () => '/providers',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((p) => p.id);
      expect(ids).toContain(caller.providerId);
      expect(ids).not.toContain(victim.providerId);
    },
  },
  {
    method: 'post',
    route: '/api/v1/providers',
    path: () => '/providers',
    body: { name: 'made-by-the-intruder', kind: 'echo' },
    status: 201,
  },
  {
    method: 'get',
    route: '/api/v1/providers/{id}',
    path: (v) => `/providers/${v.providerId}`,
    status: 404,
  },
  {
    method: 'patch',
    route: '/api/v1/providers/{id}',
    path: (v) => `/providers/${v.providerId}`,
    body: { name: 'stolen' },
    status: 404,
  },
  {
    method: 'delete',
    route: '/api/v1/providers/{id}',
    path: (v) => `/providers/${v.providerId}`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/providers/{id}/test',
    path: (v) => `/providers/${v.providerId}/test`,
    body: { model: 'm' },
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/tools',
    path: () => '/tools',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((t) => t.id);
      expect(ids).toContain(caller.toolId);
      expect(ids).not.toContain(victim.toolId);
    },
  },
  {
    method: 'post',
    route: '/api/v1/tools',
    path: () => '/tools',
    body: toolBody('made-by-the-intruder'),
    status: 201,
  },
  {
    method: 'get',
    route: '/api/v1/tools/{id}',
    path: (v) => `/tools/${v.toolId}`,
    status: 404,
  },
  {
    method: 'patch',
    route: '/api/v1/tools/{id}',
    path: (v) => `/tools/${v.toolId}`,
    body: { name: 'stolen' },
    status: 404,
  },
  {
    method: 'delete',
    route: '/api/v1/tools/{id}',
    path: (v) => `/tools/${v.toolId}`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/tools/{id}/test',
    path: (v) => `/tools/${v.toolId}/test`,
    body: { input: { id: '1' } },
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/channels',
    path: () => '/channels',
    body: { name: 'Made by the intruder', template: 'x' },
    status: 201,
    // Where it landed is checked against the database below.
  },
  {
    method: 'get',
    route: '/api/v1/channels/{id}',
    path: (v) => `/channels/${v.channelId}`,
    status: 404,
  },
  {
    method: 'patch',
    route: '/api/v1/channels/{id}',
    path: (v) => `/channels/${v.channelId}`,
    body: { name: 'Hijacked', template: 'Leak {{.}}', enabled: false },
    status: 404,
  },
  {
    method: 'delete',
    route: '/api/v1/channels/{id}',
    path: (v) => `/channels/${v.channelId}`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/channels/{id}/regenerate-url',
    path: (v) => `/channels/${v.channelId}/regenerate-url`,
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/channels/{id}/reply-secret',
    path: (v) => `/channels/${v.channelId}/reply-secret`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/channels/{id}/reply-secret/rotate',
    path: (v) => `/channels/${v.channelId}/reply-secret/rotate`,
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/channels/{id}/versions',
    path: (v) => `/channels/${v.channelId}/versions`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/channels/{id}/versions/{version}/restore',
    path: (v) => `/channels/${v.channelId}/versions/1/restore`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/channels/{id}/trials',
    path: (v) => `/channels/${v.channelId}/trials`,
    body: { template: 'Leak {{x}}', events: { last: 1 } },
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/channels/{id}/trials',
    path: (v) => `/channels/${v.channelId}/trials`,
    status: 404,
  },
  { method: 'get', route: '/api/v1/trials/{id}', path: (v) => `/trials/${v.trialId}`, status: 404 },
  {
    method: 'post',
    route: '/api/v1/trials/{id}/cancel',
    path: (v) => `/trials/${v.trialId}/cancel`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/trials/{id}/promote',
    path: (v) => `/trials/${v.trialId}/promote`,
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/events',
    path: () => '/events',
    status: 200,
    check: (body, caller, victim) => {
      const channels = listIds(body).map((e) => e.channel_id);
      expect(channels).toContain(caller.channelId);
      expect(channels).not.toContain(victim.channelId);
    },
  },
  {
    method: 'get',
    route: '/api/v1/events',
    path: (v) => `/events?channel_id=${v.channelId}`,
    status: 200,
    check: (body) => expect(body.data).toEqual([]),
  },
  { method: 'get', route: '/api/v1/events/{id}', path: (v) => `/events/${v.eventId}`, status: 404 },
  {
    method: 'get',
    route: '/api/v1/usage',
    path: () => '/usage?group=channel',
    status: 200,
    check: (body, caller, victim) => {
      const ids = (body.data as { channel_id: string }[]).map((row) => row.channel_id);
      expect(ids).toContain(caller.channelId);
      expect(ids).not.toContain(victim.channelId);
    },
  },
  {
    method: 'get',
    route: '/api/v1/spend',
    path: () => '/spend',
    status: 200,
    check: (body, caller, victim) => {
      const ids = (body.by_channel as { channel_id: string }[]).map((row) => row.channel_id);
      expect(ids).toContain(caller.channelId);
      expect(ids).not.toContain(victim.channelId);
    },
  },
  {
    method: 'get',
    route: '/api/v1/prices',
    path: () => '/prices',
    status: 200,
    check: (body, caller) =>
      expect((body.data as { model: string }[]).map((price) => price.model)).toEqual([
        modelOf(caller),
      ]),
  },
  {
    // The name of the victim's price makes a price of the caller's own.
    method: 'put',
    route: '/api/v1/prices/{model}',
    path: (v) => `/prices/${encodeURIComponent(modelOf(v))}`,
    body: { input_per_mtok: 9, output_per_mtok: 9 },
    status: 200,
  },
  {
    // ... which is the one removed; the victim's stays.
    method: 'delete',
    route: '/api/v1/prices/{model}',
    path: (v) => `/prices/${encodeURIComponent(modelOf(v))}`,
    status: 204,
  },
  {
    method: 'post',
    route: '/api/v1/events/{id}/replay',
    path: (v) => `/events/${v.eventId}/replay`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/events/replay',
    path: () => '/events/replay',
    body: { q: 'payload', dry_run: false },
    status: 200,
    // The caller's own event is replayed (if its quota allows); the victim's state is checked.
    check: (body) => expect(body).toHaveProperty('count'),
  },
  {
    method: 'get',
    route: '/api/v1/events/export',
    path: (v) => `/events/export?format=jsonl&channel_id=${v.channelId}`,
    status: 200,
  },
  {
    method: 'get',
    route: '/api/v1/audit',
    path: (v) => `/audit?target_id=${v.channelId}`,
    status: 200,
    // The victim's channel was made (and audited) in its own workspace: the caller sees none of it.
    check: (body) => expect(body.data).toEqual([]),
  },
  {
    method: 'get',
    route: '/api/v1/audit/export',
    path: (v) => `/audit/export?target_id=${v.channelId}`,
    status: 200,
  },
  {
    method: 'post',
    route: '/api/v1/events/{id}/redeliver',
    path: (v) => `/events/${v.eventId}/redeliver`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/events/{id}/approval',
    path: (v) => `/events/${v.eventId}/approval`,
    body: { decision: 'approve' },
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/api-keys',
    path: () => '/api-keys',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((k) => k.id);
      expect(ids).toContain(caller.keyId);
      expect(ids).not.toContain(victim.keyId);
    },
  },
  {
    method: 'post',
    route: '/api/v1/api-keys',
    path: () => '/api-keys',
    body: { name: 'Made by the intruder' },
    status: 201,
  },
  {
    method: 'delete',
    route: '/api/v1/api-keys/{id}',
    path: (v) => `/api-keys/${v.keyId}`,
    status: 404,
  },
  {
    method: 'get',
    route: '/api/v1/admins',
    path: () => '/admins',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((a) => a.id);
      expect(ids).toContain(caller.adminId);
      expect(ids).not.toContain(victim.adminId);
    },
  },
  {
    method: 'patch',
    route: '/api/v1/admins/{id}',
    path: (v) => `/admins/${v.adminId}`,
    body: { role: 'viewer' },
    status: 404,
  },
  {
    method: 'delete',
    route: '/api/v1/admins/{id}',
    path: (v) => `/admins/${v.adminId}`,
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/invitations',
    path: () => '/invitations',
    body: { email: 'intruder@example.com' },
    status: 201,
  },
  {
    // The stream stays open, so here only its refusal of a bad filter is asked; what it sends
    // is held to the caller's workspace in test/brain-logs/events-stream.test.ts.
    method: 'get',
    route: '/api/v1/events/stream',
    path: (v) => `/events/stream?channel_id=${v.channelId}&status=unknown`,
    status: 400,
  },
  {
    method: 'get',
    route: '/api/v1/alerts',
    path: () => '/alerts',
    status: 200,
    check: (body, caller, victim) => {
      const ids = listIds(body).map((a) => a.id);
      expect(ids).toContain(caller.alertId);
      expect(ids).not.toContain(victim.alertId);
    },
  },
  {
    method: 'post',
    route: '/api/v1/alerts',
    path: () => '/alerts',
    body: ALERT,
    status: 201,
  },
  {
    // A condition naming another workspace's channel is refused like an unknown one.
    method: 'post',
    route: '/api/v1/alerts',
    path: () => '/alerts',
    body: (v) => ({ ...ALERT, condition: { type: 'delivery_failed', channel_id: v.channelId } }),
    status: 400,
  },
  {
    method: 'get',
    route: '/api/v1/alerts/secret',
    path: () => '/alerts/secret',
    status: 200,
    check: (body, caller) => expect(body.secret).toBe(alertSecrets.get(caller.workspaceId)),
  },
  { method: 'get', route: '/api/v1/alerts/{id}', path: (v) => `/alerts/${v.alertId}`, status: 404 },
  {
    method: 'patch',
    route: '/api/v1/alerts/{id}',
    path: (v) => `/alerts/${v.alertId}`,
    body: { enabled: false },
    status: 404,
  },
  {
    method: 'post',
    route: '/api/v1/alerts/{id}/test',
    path: (v) => `/alerts/${v.alertId}/test`,
    status: 404,
  },
  {
    method: 'delete',
    route: '/api/v1/alerts/{id}',
    path: (v) => `/alerts/${v.alertId}`,
    status: 404,
  },
];

/** The model each workspace has a price of its own for. */
const modelOf = (tenant: Tenant) => `${tenant.name} model`;
/** Where what a 201 made is stored, to check that it landed in the caller's workspace. */
const CREATED_IN: Record<string, string> = {
  '/api/v1/channels': 'channels',
  '/api/v1/api-keys': 'api_keys',
  '/api/v1/invitations': 'admin_invitations',
  '/api/v1/providers': 'providers',
  '/api/v1/tools': 'tools',
  '/api/v1/alerts': 'alerts',
};

let first: Tenant;
let second: Tenant;

async function tenant(name: string, workspaceId: string, key: string): Promise<Tenant> {
  const driver = new Driver(app, key);
  const channel = await driver.createChannel({
    name: `${name} channel`,
    template: `${name} {{x}}`,
  });
  const sent = await driver.sendEvent(channel.webhook_url, { x: `${name} payload` });
  await driver
    .api('put', `/prices/${encodeURIComponent(`${name} model`)}`)
    .send({ input_per_mtok: 1, output_per_mtok: 2 })
    .expect(200);
  const apiKey = await driver.api('post', '/api-keys').send({ name: `${name} own key` });
  const admin = await app.ctx.admins.setPassword(
    `only-${workspaceId}@example.com`,
    'a password long enough',
    workspaceId,
  );
  const provider = await driver
    .api('post', '/providers')
    .send({ name: `own-${workspaceId}`, kind: 'echo' });
  const tool = await driver
    .api('post', '/tools')
    .send(toolBody(`own-${workspaceId}`))
    .expect(201);
  const alert = await driver.api('post', '/alerts').send(ALERT).expect(201);
  const secret = await driver.api('get', '/alerts/secret').expect(200);
  // A trial of its own, finished before the intruders come (its calls are spend of its own).
  const trial = await driver
    .api('post', `/channels/${channel.id}/trials`)
    .send({ template: `${name} trial {{x}}`, events: { last: 1 } })
    .expect(202);
  while ((await createTrialWorker(app.ctx).runOnce()) > 0);
  alertSecrets.set(workspaceId, secret.body.secret as string);
  return {
    alertId: String(alert.body.id),
    trialId: String(trial.body.id),
    providerId: String(provider.body.id),
    toolId: String(tool.body.id),
    name,
    workspaceId,
    key,
    channelId: channel.id,
    webhookUrl: channel.webhook_url,
    eventId: String(sent.body.event_id),
    keyId: String(apiKey.body.id),
    adminId: String(admin?.admin.id),
  };
}

/** Everything stored for a workspace, to tell whether anyone changed it. */
async function stateOf(victim: Tenant): Promise<string[]> {
  const { rows } = await app.ctx.db.query<{ row: string }>(
    `select 'workspace ' || w::text as row from workspaces w where id = $1
     union all select 'channel ' || c::text from channels c where workspace_id = $1
     union all select 'event ' || e::text from events e where workspace_id = $1
     union all select 'price ' || p::text from workspace_prices p where workspace_id = $1
     union all select 'spend ' || s::text from spend s where workspace_id = $1
     union all select 'key ' || k::text from api_keys k where workspace_id = $1
     union all select 'admin ' || m::text from admin_workspaces m where workspace_id = $1
     union all select 'invitation ' || i::text from admin_invitations i where workspace_id = $1
     union all select 'provider ' || p::text from providers p where workspace_id = $1
     union all select 'alert ' || a::text from alerts a where workspace_id = $1
     union all select 'tool ' || t::text from tools t where workspace_id = $1
     order by row`,
    [victim.workspaceId],
  );
  return rows.map((r) => r.row);
}

beforeAll(async () => {
  first = await tenant('Default workspace', app.ctx.defaultWorkspaceId, TEST_ADMIN_KEY);

  // The second workspace and its key are made the way an admin makes them: in the panel.
  const panel = new PanelClient(app);
  await panel.signIn();
  expect((await panel.form('/workspaces', { name: 'Second' })).status).toBe(303);
  const created = await panel.form('/workspace/api-keys', { name: 'Second key' });
  const key = /id="new-api-key" class="secret-box" value="([^"]+)"/.exec(created.text)?.[1];
  const { rows } = await app.ctx.db.query<{ id: string }>(
    `select id from workspaces where name = 'Second'`,
  );
  second = await tenant('Second', rows[0]?.id as string, key as string);
  // Each workspace has spent something (the events stay pending: replay finds nothing to take).
  for (const { workspaceId, channelId, eventId } of [first, second]) {
    await app.ctx.spendLedger.recordSpend({
      workspaceId,
      channelId,
      eventId,
      provider: 'default',
      model: 'gpt-4o-mini',
      promptTokens: 10,
      completionTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.000004,
    });
  }
});

describe('API workspace isolation', () => {
  it('covers every route of the API description that needs a key', () => {
    const spec = readOpenApiDocument();
    const documented = Object.entries(spec.paths)
      .filter(([path]) => path.startsWith('/api/'))
      .flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          // public operations (the API description itself) belong to no workspace
          .filter(([, operation]) => (operation as { security?: unknown[] }).security?.length !== 0)
          .map(([method]) => `${method} ${path}`),
      );
    expect(documented.length).toBeGreaterThan(0);
    const tested = new Set(ROUTES.map((r) => `${r.method} ${r.route}`));
    expect(documented.filter((route) => !tested.has(route))).toEqual([]);
  });

  describe.each([
    ['second', 'first'],
    ['first', 'second'],
  ])("the %s workspace's key against the %s workspace", (callerName, victimName) => {
    it.each(ROUTES)('$method $route → $status, its own data only', async (route) => {
      const caller = callerName === 'first' ? first : second;
      const victim = victimName === 'first' ? first : second;
      const before = await stateOf(victim);

      const req = new Driver(app, caller.key).api(route.method, route.path(victim));
      const body = typeof route.body === 'function' ? route.body(victim) : route.body;
      const res = await (body ? req.send(body) : req);

      expect(res.status).toBe(route.status);
      route.check?.(res.body as Record<string, unknown>, caller, victim);
      expect(JSON.stringify(res.body)).not.toContain(`${victim.name} payload`);
      expect(JSON.stringify(res.body)).not.toContain(victim.webhookUrl);
      expect(await stateOf(victim)).toEqual(before);
      if (res.status === 201) {
        const { rows } = await app.ctx.db.query<{ workspace_id: string }>(
          `select workspace_id from ${CREATED_IN[route.route]} where id = $1`,
          [res.body.id],
        );
        expect(rows[0]?.workspace_id).toBe(caller.workspaceId);
      }
    });

    it("leaves the victim's webhook URL working", async () => {
      const victim = victimName === 'first' ? first : second;
      expect((await new Driver(app).sendEvent(victim.webhookUrl)).status).toBe(200);
    });
  });

  describe('without a valid key', () => {
    let revoked: string;
    beforeAll(async () => {
      const panel = new PanelClient(app);
      await panel.signIn();
      const created = await panel.form('/workspace/api-keys', { name: 'Soon revoked' });
      revoked = /id="new-api-key" class="secret-box" value="([^"]+)"/.exec(
        created.text,
      )?.[1] as string;
      const { rows } = await app.ctx.db.query<{ id: string }>(
        `select id from api_keys where name = 'Soon revoked'`,
      );
      expect((await panel.form(`/workspace/api-keys/${rows[0]?.id}/revoke`)).status).toBe(303);
    });

    it.each(ROUTES)(
      '$method $route → 401 with no key, a wrong one, or a revoked one',
      async (route) => {
        for (const authorization of [
          undefined,
          `Bearer ${revoked}`,
          `Bearer ${second.key}x`,
          `Bearer ${second.key.slice(0, -1)}`,
          `Basic ${Buffer.from(`x:${second.key}`).toString('base64')}`,
          second.key,
        ]) {
          const req = request(app.baseUrl)[route.method](`/api/v1${route.path(first)}`);
          if (authorization) req.set('Authorization', authorization);
          const body = typeof route.body === 'function' ? route.body(first) : route.body;
          const res = await (body ? req.send(body) : req);
          expect(res.status, authorization).toBe(401);
        }
      },
    );
  });
});
