import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp({ env: { DEFAULT_CHAT_QUOTA: '77' } });

describe('authentication', () => {
  it('answers 401 problem+json without a valid bearer key', async () => {
    for (const auth of [undefined, 'Bearer wrong-key-wrong-key', 'Basic abc', 'Bearer']) {
      const req = request(app.baseUrl).get('/api/v1/channels');
      const res = await (auth ? req.set('Authorization', auth) : req);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('accepts an API key stored (hashed) for a workspace and scopes it to that workspace', async () => {
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into workspaces (name, chat_quota) values ('Other', 5) returning id`,
    );
    const key = 'hp_other_workspace_key_1234567890';
    const { sha256Hex: sha256 } = await import('../../src/platform/secrets.js');
    await app.ctx.db.query(
      `insert into api_keys (workspace_id, name, prefix, key_hash) values ($1, 'test', 'hp_other', $2)`,
      [rows[0]?.id, sha256(key)],
    );
    const other = new Driver(app, key);
    const mine = await driver.createChannel({ name: 'Mine' });

    expect((await other.api('get', '/workspace')).body).toMatchObject({
      name: 'Other',
      chat_quota: 5,
    });
    expect((await other.api('get', '/channels')).body.data).toEqual([]);
    await other.api('get', `/channels/${mine.id}`).expect(404);
    await other.api('patch', `/channels/${mine.id}`).send({ name: 'Stolen' }).expect(404);
    await other.api('post', `/channels/${mine.id}/regenerate-url`).expect(404);
    await other.api('delete', `/channels/${mine.id}`).expect(404);
    expect((await driver.api('get', `/channels/${mine.id}`)).body.name).toBe('Mine');
  });
});

describe('channels', () => {
  it('creates, lists, reads, updates and deletes a channel', async () => {
    const created = await driver
      .api('post', '/channels')
      .send({ name: 'Shop', template: 'New order {{order.id}}' })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Shop',
      enabled: true,
      template: 'New order {{order.id}}',
      ai: {
        model: null,
        system_prompt: null,
        temperature: null,
        max_tokens: null,
        response_format: null,
        thread_key: null,
        history: null,
        redact: null,
        restore: null,
        spotlight: null,
        provider: 'default',
        fallbacks: [],
        tools: [],
        max_tool_rounds: 4,
        prompt_cache: '5m',
        images: [],
        reply_cache_s: 0,
      },
      webhook_url: expect.stringMatching(new RegExp(`^${app.baseUrl}/hooks/[A-Za-z0-9_-]{32}$`)),
      verification: { scheme: 'none', secret_set: false },
      allowed_ips: [],
      allowed_origins: [],
      dedup: { mode: 'auto', window_s: 86400 },
      reply_delivery: { url: null, enabled: true, disabled_reason: null },
      accept_when: [],
      destinations: [],
      version: 1,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    const id = created.body.id as string;

    const list = await driver.api('get', '/channels').expect(200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(id);

    const updated = await driver
      .api('patch', `/channels/${id}`)
      .send({ template: 'Order {{ order.id }}', enabled: false })
      .expect(200);
    expect(updated.body).toMatchObject({
      name: 'Shop',
      template: 'Order {{ order.id }}',
      enabled: false,
      webhook_url: created.body.webhook_url,
    });

    await driver.api('delete', `/channels/${id}`).expect(204);
    await driver.api('get', `/channels/${id}`).expect(404);
    await driver.api('delete', `/channels/${id}`).expect(404);
  });

  it('gives every channel its own URL with a 192-bit token', async () => {
    const urls = new Set<string>();
    for (let i = 0; i < 5; i++) urls.add((await driver.createChannel()).webhook_url);
    expect(urls.size).toBe(5);
    for (const url of urls)
      expect(Buffer.from(url.split('/').pop() as string, 'base64url')).toHaveLength(24);
  });

  it('refuses invalid bodies with 400 and the field paths', async () => {
    const cases: [unknown, string][] = [
      [{ template: 'x' }, 'name'],
      [{ name: '', template: 'x' }, 'name'],
      [{ name: 'a'.repeat(201), template: 'x' }, 'name'],
      [{ name: 'a' }, 'template'],
      [{ name: 'a', template: 5 }, 'template'],
      [{ name: 'a', template: 'x', enabled: 'yes' }, 'enabled'],
      [{ name: 'a', template: 'x', colour: 'red' }, ''],
    ];
    for (const [body, path] of cases) {
      const res = await driver
        .api('post', '/channels')
        .send(body as object)
        .expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    const channel = await driver.createChannel();
    await driver.api('patch', `/channels/${channel.id}`).send({ enabled: 'no' }).expect(400);
  });

  it('answers 400 invalid_json for a malformed JSON body and 404 for unknown ids', async () => {
    const res = await driver
      .api('post', '/channels')
      .set('Content-Type', 'application/json')
      .send('{"name":');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    for (const id of ['999999', 'abc', "1' or '1'='1", '0', '-1']) {
      await driver.api('get', `/channels/${encodeURIComponent(id)}`).expect(404);
    }
    await driver.api('get', '/nothing-here').expect(404);
  });
});

describe('workspace', () => {
  it('was created on first start with DEFAULT_CHAT_QUOTA', async () => {
    const res = await driver.api('get', '/workspace').expect(200);
    const nextMonth = new Date(
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1),
    );
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Default workspace',
      chat_quota: 77,
      chats_used: 0,
      quota_resets_at: nextMonth.toISOString(),
      monthly_budget_usd: null,
      spent_usd: 0,
      budget_resets_at: nextMonth.toISOString(),
    });
  });

  it('updates quota and name and resets usage; refuses anything else', async () => {
    const res = await driver.setWorkspace({ chat_quota: 500, name: 'Acme' }).expect(200);
    expect(res.body).toMatchObject({ chat_quota: 500, name: 'Acme' });
    for (const body of [
      { chats_used: 3 },
      { chat_quota: -1 },
      { chat_quota: 1.5 },
      { name: '' },
      { id: '9' },
    ]) {
      expect((await driver.setWorkspace(body).expect(400)).body.code).toBe('validation_failed');
    }
  });
});
