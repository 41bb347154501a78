import { createHash } from 'node:crypto';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_ENV,
  PanelClient,
  inviteAdmin,
  unescapeHtml,
  useSignedInAdmin,
} from './panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);

describe('the workspace page', () => {
  it('shows usage against the quota with a bar and when it resets', async () => {
    await driver.setWorkspace({ chat_quota: 40, chats_used: 0 });
    const id = await client.createChannel('Usage');
    const url = await client.webhookUrl(id);
    for (let i = 0; i < 3; i++) await driver.sendEvent(url);
    const html = (await client.page('/workspace')).text;
    expect(html).toContain(
      '<strong id="chats-used">3</strong> of <span id="chat-quota">40</span> chats used',
    );
    expect(html).toMatch(/<meter min="0" max="40" value="3"/);
    const resetsAt = (await driver.api('get', '/workspace')).body.quota_resets_at as string;
    expect(html).toContain(`${resetsAt.slice(0, 10)} 00:00:00 UTC`);
  });

  it('edits the quota and the name', async () => {
    const res = await client.form('/workspace', { name: 'Acme', chat_quota: '2500' });
    expect(res.status).toBe(303);
    expect((await driver.api('get', '/workspace')).body).toMatchObject({
      name: 'Acme',
      chat_quota: 2500,
    });
    expect((await client.page('/workspace')).text).toContain('Workspace saved.');
  });

  it('refuses a quota that is not a whole number, keeping what was typed', async () => {
    const res = await client.form('/workspace', { name: 'Acme', chat_quota: '12.5' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('value="12.5"');
    expect(res.text).toContain('class="field-error" id="chat_quota-error"');
    expect((await driver.api('get', '/workspace')).body.chat_quota).toBe(2500);
  });

  it("sets and removes the AI budget, and shows the month's spend against it", async () => {
    const set = await client.form('/workspace', {
      name: 'Acme',
      chat_quota: '2500',
      monthly_budget_usd: '12.5',
    });
    expect(set.status).toBe(303);
    expect((await driver.api('get', '/workspace')).body.monthly_budget_usd).toBe(12.5);
    await app.ctx.db.query(`update workspaces set spent_usd = 3.25`);
    const html = (await client.page('/workspace')).text;
    expect(html).toMatch(
      /id="spent-usd" data-usd="3.25">\$3.25<\/strong> spent of a budget of <span id="monthly-budget">\$12.50</,
    );
    expect(html).toContain('value="12.5"');

    const refused = await client.form('/workspace', {
      name: 'Acme',
      chat_quota: '2500',
      monthly_budget_usd: '-1',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('class="field-error" id="monthly_budget_usd-error"');

    await client.form('/workspace', { name: 'Acme', chat_quota: '2500', monthly_budget_usd: '' });
    expect((await driver.api('get', '/workspace')).body.monthly_budget_usd).toBeNull();
    expect((await client.page('/workspace')).text).toContain('no budget set');
    await app.ctx.db.query(`update workspaces set spent_usd = 0`);
  });

  it('shows a spend of unknown cost as unknown, never as $0', async () => {
    const workspace = (await driver.api('get', '/workspace')).body as { id: string };
    // One call of this month nobody priced: the month's spend counts nothing for it.
    await app.ctx.db.query(
      `insert into spend (workspace_id, provider, model, prompt_tokens, completion_tokens, cost_usd)
       values ($1, 'default', 'house-model', 10, 2, null)`,
      [workspace.id],
    );
    try {
      const html = (await client.page('/workspace')).text;
      expect(html).toContain('id="spent-usd" data-usd="0">unknown</strong> spent');
      expect(unescapeHtml(html)).toMatch(
        /id="spent-unpriced">1 call this month cost an unknown amount, not counted here/,
      );
      expect(html).toContain(
        'costing <strong id="usage-cost">unknown</strong> (<span id="usage-unpriced">1 call of unknown cost</span>)',
      );
      const today = new Date().toISOString().slice(0, 10);
      const row = new RegExp(`<tr data-day="${today}" [^>]*data-cost="">[\\s\\S]*?</tr>`).exec(
        html,
      );
      expect(row?.[0]).toContain('<td class="num">unknown</td>');
    } finally {
      await app.ctx.db.query('delete from spend');
    }
  });

  it('resets usage to 0', async () => {
    const id = await client.createChannel('Reset');
    await driver.sendEvent(await client.webhookUrl(id));
    expect((await driver.api('get', '/workspace')).body.chats_used).toBeGreaterThan(0);
    expect((await client.form('/workspace/reset-usage')).status).toBe(303);
    expect((await driver.api('get', '/workspace')).body.chats_used).toBe(0);
  });
});

describe('API keys', () => {
  it('are shown once, work against the API, are listed by prefix, and stop working when revoked', async () => {
    const created = await client.form('/workspace/api-keys', { name: 'Deploy script' });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = /id="new-api-key" class="secret-box" value="([^"]+)"/.exec(
      created.text,
    )?.[1] as string;
    expect(key).toMatch(/^hp_[A-Za-z0-9_-]{43}$/);

    const api = () =>
      request(app.baseUrl).get('/api/v1/workspace').set('Authorization', `Bearer ${key}`);
    expect((await api()).status).toBe(200);

    const { rows } = await app.ctx.db.query<{ id: string; prefix: string; key_hash: string }>(
      `select id, prefix, key_hash from api_keys where name = 'Deploy script'`,
    );
    expect(rows[0]?.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(key.startsWith(rows[0]?.prefix as string)).toBe(true);

    const listed = (await client.page('/workspace')).text;
    expect(listed).toContain('Deploy script');
    expect(listed).toContain(`<code>${rows[0]?.prefix}…</code>`);
    expect(listed).not.toContain(key);
    expect(listed).toMatch(
      /Deploy script<\/td>[\s\S]*?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td>\s*<td>\d{4}-/,
    );

    expect((await client.form(`/workspace/api-keys/${rows[0]?.id}/revoke`)).status).toBe(303);
    expect((await api()).status).toBe(401);
    expect((await client.page('/workspace')).text).toContain('badge-revoked');
  });
});

describe('workspaces', () => {
  it('an admin creates one, lands in it, and switches between them', async () => {
    const channelInFirst = await client.createChannel('In the first workspace');
    const res = await client.form('/workspaces', { name: 'Second' });
    expect(res.headers.location).toBe('/channels');
    const channels = (await client.page('/channels')).text;
    expect(channels).toContain('Workspace “Second” created');
    expect(channels).toContain('No channels in Second yet');
    expect(channels).toMatch(/<option value="\d+" selected>Second<\/option>/);
    // The other workspace's channel is out of reach while Second is open.
    expect((await client.page(`/channels/${channelInFirst}`)).status).toBe(404);

    const first = /<option value="(\d+)">Acme<\/option>/.exec(channels)?.[1] as string;
    const back = await client.form('/workspace/switch', { workspace_id: first, back: '/logs' });
    expect(back.headers.location).toBe('/logs');
    expect((await client.page(`/channels/${channelInFirst}`)).status).toBe(200);
  });

  it('refuses an empty workspace name', async () => {
    const res = await client.form('/workspaces', { name: ' ' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('must not be empty');
  });
});

describe("another workspace's admin", () => {
  let ownChannel: string;
  let ownEvent: string;
  let ownKey: string;
  let ownWorkspace: string;
  let intruder: PanelClient;

  beforeAll(async () => {
    const owner = new PanelClient(app);
    await owner.signIn();
    ownChannel = await owner.createChannel('Private channel', 'Secret {{x}}');
    ownEvent = String(
      (await driver.sendEvent(await owner.webhookUrl(ownChannel), { x: 'private payload' })).body
        .event_id,
    );
    await owner.form('/workspace/api-keys', { name: 'Private key' });
    const { rows } = await app.ctx.db.query<{ id: string; workspace_id: string }>(
      `select id, workspace_id from api_keys where name = 'Private key'`,
    );
    ownKey = rows[0]?.id as string;
    ownWorkspace = rows[0]?.workspace_id as string;

    // The intruder is invited by the owner to a workspace of its own, as the panel does it.
    expect((await owner.form('/workspaces', { name: 'Elsewhere' })).status).toBe(303);
    intruder = await inviteAdmin(owner, 'intruder@example.com', 'intruder password');
  });

  it('does not see the channels or events in lists', async () => {
    const channels = (await intruder.page('/channels')).text;
    expect(channels).toContain('No channels in Elsewhere yet');
    expect(channels).not.toContain('Private channel');
    const logs = (await intruder.page('/logs')).text;
    expect(logs).not.toContain('private payload');
    expect(logs).not.toContain(`id="event-${ownEvent}"`);
    expect((await intruder.page('/workspace')).text).not.toContain('Private key');
  });

  it('gets 404 for their ids on every page', async () => {
    for (const path of [
      `/channels/${ownChannel}`,
      `/channels/${ownChannel}/regenerate`,
      `/channels/${ownChannel}/delete`,
      `/logs/${ownEvent}`,
      `/logs?channel=${ownChannel}`,
    ]) {
      expect((await intruder.page(path)).status, path).toBe(404);
    }
  });

  it('gets 404 for their ids on every action, and changes nothing', async () => {
    const url = (await driver.api('get', `/channels/${ownChannel}`)).body.webhook_url;
    for (const [path, fields] of [
      [`/channels/${ownChannel}`, { name: 'Hijacked', template: 'x' }],
      [`/channels/${ownChannel}/preview`, { template: 'x', sample: '{}', source: 'last' }],
      [`/channels/${ownChannel}/test`, { sample: '{}' }],
      [`/channels/${ownChannel}/disable`, {}],
      [`/channels/${ownChannel}/enable`, {}],
      [`/channels/${ownChannel}/regenerate`, {}],
      [`/channels/${ownChannel}/delete`, {}],
      [`/workspace/api-keys/${ownKey}/revoke`, {}],
      ['/workspace/switch', { workspace_id: ownWorkspace }],
    ] as const) {
      expect((await intruder.form(path, fields)).status, path).toBe(404);
    }
    const channel = (await driver.api('get', `/channels/${ownChannel}`)).body;
    expect(channel).toMatchObject({ name: 'Private channel', enabled: true, webhook_url: url });
    expect(await driver.eventsOf(ownChannel)).toHaveLength(1);
    const { rows } = await app.ctx.db.query<{ revoked_at: Date | null }>(
      'select revoked_at from api_keys where id = $1',
      [ownKey],
    );
    expect(rows[0]?.revoked_at).toBeNull();
  });

  it('changes only their own workspace on the workspace page', async () => {
    await intruder.form('/workspace', { name: 'Elsewhere', chat_quota: '7' });
    await intruder.form('/workspace/reset-usage');
    const own = (await driver.api('get', '/workspace')).body;
    expect(own.chat_quota).not.toBe(7);
    expect(unescapeHtml((await intruder.page('/workspace')).text)).toContain(
      'of <span id="chat-quota">7</span>',
    );
  });
});
