import { describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { AI_API_KEY: 'server-key-1', PROVIDERS_ALLOW_PRIVATE: 'true' },
});

const SECRET_KEY = 'sk-provider-secret-0123456789abcdef';

async function addProvider(body: Record<string, unknown>) {
  const res = await driver.api('post', '/providers').send(body);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, unknown> & { id: string; name: string };
}

describe('the providers of a workspace', () => {
  it('lists the built-in default first, from the server configuration, read-only', async () => {
    await addProvider({ name: 'aaa-first-by-name', kind: 'echo' });
    const { body } = await driver.api('get', '/providers').expect(200);
    expect(body.data[0]).toEqual({
      id: 'default',
      name: 'default',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key_set: true,
      read_only: true,
      created_at: null,
      updated_at: null,
    });
    expect(body.data.map((p: { name: string }) => p.name)).toContain('aaa-first-by-name');
    expect((await driver.api('get', '/providers/default').expect(200)).body.name).toBe('default');
    const patch = await driver.api('patch', '/providers/default').send({ name: 'other' });
    expect([patch.status, patch.body.code]).toEqual([409, 'provider_read_only']);
    const del = await driver.api('delete', '/providers/default');
    expect([del.status, del.body.code]).toEqual([409, 'provider_read_only']);
  });

  it('adds, shows, changes and deletes a provider; its key is write-only', async () => {
    const created = await addProvider({
      name: 'openai-main',
      kind: 'openai',
      api_key: SECRET_KEY,
    });
    expect(created).toMatchObject({
      name: 'openai-main',
      kind: 'openai',
      base_url: 'https://api.openai.com/v1',
      api_key_set: true,
      read_only: false,
    });
    expect(JSON.stringify(created)).not.toContain(SECRET_KEY);
    // Stored sealed with SECRETS_KEY, like every secret the service keeps.
    const { rows } = await app.ctx.db.query<{ api_key: string }>(
      'select api_key from providers where id = $1',
      [created.id],
    );
    expect(rows[0]?.api_key).toMatch(/^enc:v1:/);
    expect(rows[0]?.api_key).not.toContain(SECRET_KEY);

    const patched = await driver
      .api('patch', `/providers/${created.id}`)
      .send({ name: 'openai-eu', base_url: 'https://eu.example.com/v1' })
      .expect(200);
    // Another server, and no key given with it: the key stays with the server it was given for.
    expect(patched.body).toMatchObject({
      name: 'openai-eu',
      base_url: 'https://eu.example.com/v1',
      api_key_set: false,
    });
    const cleared = await driver
      .api('patch', `/providers/${created.id}`)
      .send({ api_key: null, base_url: null })
      .expect(200);
    expect(cleared.body).toMatchObject({
      api_key_set: false,
      base_url: 'https://api.openai.com/v1',
    });

    const listed = (await driver.api('get', '/providers').expect(200)).text;
    expect(listed).not.toContain(SECRET_KEY);
    expect(app.logText()).not.toContain(SECRET_KEY);

    await driver.api('delete', `/providers/${created.id}`).expect(204);
    await driver.api('get', `/providers/${created.id}`).expect(404);
    await driver.api('delete', `/providers/${created.id}`).expect(404);
    await driver.api('get', '/providers/not-an-id').expect(404);
  });

  it('checks names, kinds and URLs', async () => {
    await addProvider({ name: 'taken', kind: 'echo' });
    for (const name of ['taken', 'default']) {
      const res = await driver.api('post', '/providers').send({ name, kind: 'echo' });
      expect([res.status, res.body.code]).toEqual([409, 'provider_name_taken']);
    }
    const other = await addProvider({ name: 'other', kind: 'echo' });
    const rename = await driver.api('patch', `/providers/${other.id}`).send({ name: 'taken' });
    expect([rename.status, rename.body.code]).toEqual([409, 'provider_name_taken']);
    const toDefault = await driver.api('patch', `/providers/${other.id}`).send({ name: 'default' });
    expect([toDefault.status, toDefault.body.code]).toEqual([409, 'provider_name_taken']);

    for (const body of [
      { name: '', kind: 'echo' },
      { name: 'x'.repeat(65), kind: 'echo' },
      { name: 'has space', kind: 'echo' },
      { name: 'ok', kind: 'mistral' },
      { name: 'ok', kind: 'openai', base_url: 'ftp://example.com' },
      { name: 'ok', kind: 'echo', base_url: 'https://example.com' },
      { name: 'ok', kind: 'echo', colour: 'red' },
    ]) {
      const res = await driver.api('post', '/providers').send(body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
    const anthropic = await addProvider({ name: 'claude', kind: 'anthropic', api_key: 'k' });
    expect(anthropic.base_url).toBe('https://api.anthropic.com');
  });

  describe('on an instance without PROVIDERS_ALLOW_PRIVATE, on the same database', () => {
    const { driver: strict } = useTestApp({ env: () => ai.env(), database: () => app.database });

    it('refuses private addresses unless PROVIDERS_ALLOW_PRIVATE is set', async () => {
      const res = await strict
        .api('post', '/providers')
        .send({ name: 'local', kind: 'openai', base_url: 'http://127.0.0.1:11434/v1' });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^base_url: refused: .*PROVIDERS_ALLOW_PRIVATE/);
      // The setting of providers only: DELIVERY_ALLOW_PRIVATE would not let it through.
      expect(res.body.detail).not.toContain('DELIVERY_ALLOW_PRIVATE');
      const saved = await addProvider({ name: 'nearby', kind: 'openai' });
      const patch = await strict
        .api('patch', `/providers/${saved.id}`)
        .send({ base_url: 'http://localhost:11434/v1' });
      expect([patch.status, patch.body.code]).toEqual([400, 'validation_failed']);
      expect(patch.body.detail).toContain('PROVIDERS_ALLOW_PRIVATE=true');
      expect(patch.body.detail).not.toContain('DELIVERY_ALLOW_PRIVATE');
    });

    it('refuses them at connect time too, naming PROVIDERS_ALLOW_PRIVATE only', async () => {
      // Saved where private addresses are allowed, called where they are not.
      const local = await addProvider({
        name: 'on-this-host',
        kind: 'openai',
        base_url: ai.baseUrl,
      });
      const test = await strict
        .api('post', `/providers/${local.id}/test`)
        .send({ model: 'm-1' })
        .expect(200);
      expect(test.body.ok).toBe(false);
      expect(test.body.error).toMatch(/refused unless .*PROVIDERS_ALLOW_PRIVATE=true/);
      expect(test.body.error).not.toContain('DELIVERY_ALLOW_PRIVATE');
      expect(ai.requests).toHaveLength(0);
    });
  });

  describe('on an instance with ALLOW_PRIVATE_NETWORK, on the same database', () => {
    const { driver: network } = useTestApp({
      env: () => ({ ...ai.env(), ALLOW_PRIVATE_NETWORK: 'true' }),
      database: () => app.database,
    });
    const { driver: strictAlone } = useTestApp({
      env: () => ({ ...ai.env(), ALLOW_PRIVATE_NETWORK: 'true', PROVIDERS_ALLOW_PRIVATE: 'false' }),
      database: () => app.database,
    });

    it('allows private addresses, unless PROVIDERS_ALLOW_PRIVATE=false is set alone', async () => {
      const body = { kind: 'openai', base_url: 'http://127.0.0.1:11434/v1' };
      await network
        .api('post', '/providers')
        .send({ ...body, name: 'developer-machine' })
        .expect(201);
      const refused = await strictAlone.api('post', '/providers').send({ ...body, name: 'no' });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toContain('PROVIDERS_ALLOW_PRIVATE=true');
    });
  });
});

describe('channels name providers', () => {
  it('refuses unknown names, and deleting or renaming a provider a channel names', async () => {
    const backup = await addProvider({ name: 'backup', kind: 'echo' });
    const unknown = await driver
      .api('post', '/channels')
      .send({ name: 'Unknown', template: 'x', ai: { provider: 'nope' } });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'unknown_provider']);
    const tooMany = await driver.api('post', '/channels').send({
      name: 'Too many',
      template: 'x',
      ai: { fallbacks: Array.from({ length: 4 }, () => ({ provider: 'backup' })) },
    });
    expect([tooMany.status, tooMany.body.code]).toEqual([400, 'validation_failed']);

    const channel = await driver.createChannel({
      name: 'Uses backup',
      ai: { fallbacks: [{ provider: 'backup', model: 'm2' }] },
    });
    expect((channel as unknown as { ai: unknown }).ai).toMatchObject({
      provider: 'default',
      fallbacks: [{ provider: 'backup', model: 'm2' }],
    });
    const patchUnknown = await driver.updateChannel(channel.id, {
      ai: { fallbacks: [{ provider: 'gone' }] },
    });
    expect([patchUnknown.status, patchUnknown.body.code]).toEqual([400, 'unknown_provider']);

    const del = await driver.api('delete', `/providers/${backup.id}`);
    expect([del.status, del.body.code]).toEqual([409, 'provider_in_use']);
    expect(del.body.channels).toEqual(['Uses backup']);
    const rename = await driver.api('patch', `/providers/${backup.id}`).send({ name: 'renamed' });
    expect([rename.status, rename.body.code]).toEqual([409, 'provider_in_use']);
    // Other changes are fine while in use.
    await driver.api('patch', `/providers/${backup.id}`).send({ api_key: 'k2' }).expect(200);

    // The channel's own provider counts too; once no channel names it, it may go.
    await driver
      .updateChannel(channel.id, { ai: { provider: 'backup', fallbacks: null } })
      .expect(200);
    expect((await driver.api('delete', `/providers/${backup.id}`)).status).toBe(409);
    await driver.updateChannel(channel.id, { ai: { provider: null } }).expect(200);
    await driver.api('delete', `/providers/${backup.id}`).expect(204);
  });

  it('does not count deleted channels as using a provider', async () => {
    const spare = await addProvider({ name: 'spare', kind: 'echo' });
    const channel = await driver.createChannel({ name: 'Short-lived', ai: { provider: 'spare' } });
    await driver.api('delete', `/channels/${channel.id}`).expect(204);
    await driver.api('delete', `/providers/${spare.id}`).expect(204);
  });

  it('keeps providers of one workspace out of another', async () => {
    const mine = await addProvider({ name: 'mine', kind: 'echo' });
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into workspaces (name, chat_quota) values ('Other', 10) returning id`,
    );
    const other = await app.ctx.apiKeys.create(rows[0]!.id, 'other key');
    const otherDriver = new Driver(app, other.key);
    await otherDriver.api('get', `/providers/${mine.id}`).expect(404);
    const list = (await otherDriver.api('get', '/providers').expect(200)).body.data;
    expect(list.map((p: { name: string }) => p.name)).toEqual(['default']);
    const res = await otherDriver
      .api('post', '/channels')
      .send({ name: 'X', template: 'x', ai: { provider: 'mine' } });
    expect(res.body.code).toBe('unknown_provider');
  });
});

describe('POST /api/v1/providers/{id}/test', () => {
  it('makes one small call and says how it went', async () => {
    const local = await addProvider({
      name: 'local',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key: SECRET_KEY,
    });
    ai.reset();
    const ok = await driver.api('post', `/providers/${local.id}/test`).send({ model: 'm-1' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, model: 'm-1', latency_ms: expect.any(Number) });
    expect(ai.requests).toHaveLength(1);
    expect(ai.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect((ai.requests[0]?.body as { model: string }).model).toBe('m-1');

    ai.enqueue({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${SECRET_KEY}` } },
    });
    const failed = await driver.api('post', `/providers/${local.id}/test`).send({ model: 'm-1' });
    expect(failed.status).toBe(200);
    expect(failed.body.ok).toBe(false);
    expect(failed.body.error).toMatch(/HTTP 401/);
    expect(failed.text).not.toContain(SECRET_KEY);

    const echo = await addProvider({ name: 'echo-test', kind: 'echo' });
    const echoed = await driver.api('post', `/providers/${echo.id}/test`).send({ model: 'any' });
    expect(echoed.body).toMatchObject({ ok: true, model: 'any' });
    const byDefault = await driver.api('post', '/providers/default/test').send({ model: 'x' });
    expect(byDefault.body.ok).toBe(true);
    await driver.api('post', '/providers/999999/test').send({ model: 'x' }).expect(404);
    await driver.api('post', `/providers/${echo.id}/test`).send({}).expect(400);
    expect(app.logText()).not.toContain(SECRET_KEY);
  });

  it("counts a test's call in the month's spend, priced like any call", async () => {
    const priced = await addProvider({
      name: 'priced',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key: SECRET_KEY,
    });
    await driver
      .api('put', '/prices/test-model')
      .send({ input_per_mtok: 2, output_per_mtok: 10 })
      .expect(200);
    const spentBefore = (await driver.api('get', '/workspace').expect(200)).body.spent_usd;
    ai.enqueue(
      {
        body: {
          ...chatCompletion('OK'),
          usage: {
            prompt_tokens: 1000,
            completion_tokens: 100,
            total_tokens: 1100,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
          },
        },
      },
      { status: 401, body: { error: { message: 'Incorrect API key provided' } } },
    );
    const test = () =>
      driver.api('post', `/providers/${priced.id}/test`).send({ model: 'test-model' });
    expect((await test()).body.ok).toBe(true);
    expect((await test()).body.ok).toBe(false);

    // (1000 × 2 + 100 × 10) / 1e6: the answered call; the refused one is a call of no known cost.
    const cost = 0.003;
    const workspace = (await driver.api('get', '/workspace').expect(200)).body;
    expect(workspace.spent_usd).toBeCloseTo(spentBefore + cost, 12);
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend.by_model).toContainEqual({
      provider: 'priced',
      model: 'test-model',
      calls: 2,
      prompt_tokens: 1000,
      completion_tokens: 100,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: expect.closeTo(cost, 12),
    });
    // No channel made these calls.
    expect(spend.by_channel).toContainEqual({
      channel_id: null,
      calls: expect.any(Number),
      cost_usd: expect.closeTo(cost, 12),
    });
  });

  it('starts no test call once the workspace has spent its budget', async () => {
    const provider = await addProvider({
      name: 'budgeted',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key: SECRET_KEY,
    });
    const callsBefore = ai.requests.length;
    await driver.api('patch', '/workspace').send({ monthly_budget_usd: 0 }).expect(200);
    try {
      // Refused as a webhook is, with the contract's problem.
      const test = await driver
        .api('post', `/providers/${provider.id}/test`)
        .send({ model: 'test-model' })
        .expect(403);
      expect(test.body).toMatchObject({ code: 'budget_exceeded', monthly_budget_usd: 0 });
      expect(ai.requests.length).toBe(callsBefore);
    } finally {
      await driver.api('patch', '/workspace').send({ monthly_budget_usd: null }).expect(200);
    }
  });
});
