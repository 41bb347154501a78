import { afterEach, describe, expect, it } from 'vitest';
import { databaseDump, foundIn } from '../secrets/secret-forms.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { McpTestServer, ToolEndpoint } from '../support/tool-servers.js';

const endpoint = useFixture(() => ToolEndpoint.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const mcp = useFixture(() => McpTestServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver } = useTestApp({ env: { TOOLS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'trace' } });

const HEADER_SECRET = 'tool-header-secret-7f3a9c2e5b8d1046';
const QUERY_TOKEN = 'query-token-9d8c7b6a5f4e3d2c1b0a';

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
  required: ['city'],
  additionalProperties: false,
};

function httpTool(overrides: Record<string, unknown> = {}) {
  return {
    name: 'weather',
    kind: 'http',
    description: 'The weather of a city',
    url: `${endpoint.baseUrl}/weather/{{input.city}}?days={{input.days}}`,
    input_schema: WEATHER_SCHEMA,
    ...overrides,
  };
}

function mcpTool(overrides: Record<string, unknown> = {}) {
  return {
    name: 'mcp-weather',
    kind: 'mcp',
    description: 'Weather tools',
    url: mcp.url,
    allowed_tools: ['weather'],
    ...overrides,
  };
}

async function addTool(body: Record<string, unknown>) {
  const res = await driver.api('post', '/tools').send(body);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, unknown> & { id: string; name: string };
}

/** Each test starts without tools, and with no channel naming any. */
async function removeAll() {
  await app.ctx.db.query('update channels set deleted_at = now() where deleted_at is null');
  await app.ctx.db.query('delete from tools');
}
afterEach(removeAll);

describe('the tools of a workspace', () => {
  it('adds, shows, lists, changes and deletes a tool; its headers are write-only', async () => {
    const created = await addTool(
      httpTool({ headers: { Authorization: `Bearer ${HEADER_SECRET}` } }),
    );
    expect(created).toEqual({
      id: expect.any(String),
      name: 'weather',
      kind: 'http',
      description: 'The weather of a city',
      approval: 'never',
      safe_in_trials: false,
      timeout_ms: 10_000,
      headers_set: ['Authorization'],
      url: `${endpoint.baseUrl}/weather/{{input.city}}?days={{input.days}}`,
      method: 'POST',
      input_schema: WEATHER_SCHEMA,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(created)).not.toContain(HEADER_SECRET);
    expect((await driver.api('get', `/tools/${created.id}`).expect(200)).body).toEqual(created);
    const listed = (await driver.api('get', '/tools').expect(200)).body.data;
    expect(listed).toEqual([created]);

    const changed = await driver
      .api('patch', `/tools/${created.id}`)
      .send({
        description: 'Weather',
        approval: 'always',
        safe_in_trials: true,
        timeout_ms: 500,
        method: 'GET',
      })
      .expect(200);
    expect(changed.body).toMatchObject({
      description: 'Weather',
      approval: 'always',
      safe_in_trials: true,
      timeout_ms: 500,
      method: 'GET',
      headers_set: ['Authorization'],
    });

    const mcpCreated = await addTool(mcpTool());
    expect(mcpCreated).toMatchObject({ kind: 'mcp', url: mcp.url, allowed_tools: ['weather'] });
    expect(mcpCreated).not.toHaveProperty('input_schema');
    expect(mcpCreated).not.toHaveProperty('method');

    await driver.api('delete', `/tools/${created.id}`).expect(204);
    await driver.api('get', `/tools/${created.id}`).expect(404);
    await driver.api('delete', `/tools/${created.id}`).expect(404);
    await driver.api('get', '/tools/not-an-id').expect(404);
    await removeAll();
  });

  it('refuses what the contract refuses, each as validation_failed', async () => {
    const longName = 'x'.repeat(49);
    const manyHeaders = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']));
    for (const body of [
      httpTool({ name: '' }),
      httpTool({ name: longName }),
      httpTool({ name: 'has space' }),
      httpTool({ description: '' }),
      httpTool({ description: 'd'.repeat(1025) }),
      httpTool({ approval: 'sometimes' }),
      httpTool({ safe_in_trials: 'yes' }),
      httpTool({ timeout_ms: 99 }),
      httpTool({ timeout_ms: 30_001 }),
      httpTool({ headers: manyHeaders }),
      httpTool({ headers: { 'bad header': 'v' } }),
      httpTool({ headers: { 'x-a': 'line\nbreak' } }),
      httpTool({ method: 'HEAD' }),
      httpTool({ url: 'ftp://example.com/x' }),
      httpTool({ url: 'https://{{input.host}}/x' }),
      httpTool({ url: 'https://example.com/{{ env.KEY }}' }),
      httpTool({ input_schema: { type: 'string' } }),
      httpTool({ input_schema: { type: 'object', properties: { a: { type: 12 } } } }),
      httpTool({ input_schema: undefined }),
      httpTool({ allowed_tools: ['x'] }),
      httpTool({ colour: 'red' }),
      mcpTool({ allowed_tools: [] }),
      mcpTool({ allowed_tools: Array.from({ length: 65 }, (_, i) => `t${i}`) }),
      mcpTool({ allowed_tools: undefined }),
      mcpTool({ url: `${mcp.url}/{{input.x}}` }),
      mcpTool({ input_schema: WEATHER_SCHEMA }),
      { ...mcpTool(), kind: 'shell' },
    ]) {
      const res = await driver.api('post', '/tools').send(body);
      expect([res.status, res.body.code], JSON.stringify(body).slice(0, 200)).toEqual([
        400,
        'validation_failed',
      ]);
    }
    const tool = await addTool(httpTool({ name: 'a'.repeat(48) }));
    const mcpOne = await addTool(mcpTool());
    for (const [id, change] of [
      [tool.id, { kind: 'mcp' }],
      [tool.id, { name: 'bad name' }],
      [tool.id, { allowed_tools: ['weather'] }],
      [tool.id, { colour: 'red' }],
      [mcpOne.id, { input_schema: WEATHER_SCHEMA }],
      [mcpOne.id, { method: 'GET' }],
      [mcpOne.id, { url: `${mcp.url}?q={{input.q}}` }],
    ] as const) {
      const res = await driver.api('patch', `/tools/${id}`).send(change);
      expect([res.status, res.body.code], JSON.stringify(change)).toEqual([
        400,
        'validation_failed',
      ]);
    }
    await removeAll();
  });

  it('keeps names unique in the workspace: 409 tool_name_taken', async () => {
    const first = await addTool(httpTool());
    const again = await driver.api('post', '/tools').send(mcpTool({ name: 'weather' }));
    expect([again.status, again.body.code]).toEqual([409, 'tool_name_taken']);
    const other = await addTool(mcpTool());
    const rename = await driver.api('patch', `/tools/${other.id}`).send({ name: first.name });
    expect([rename.status, rename.body.code]).toEqual([409, 'tool_name_taken']);
    await removeAll();
  });

  it('holds at most 200 tools: 409 limit_reached', async () => {
    const values = Array.from(
      { length: 199 },
      (_, i) => `($1, 'bulk-${i}', 'mcp', 'd', $2, '{x}')`,
    );
    const [workspace] = (
      await app.ctx.db.query<{ id: string }>('select id from workspaces order by id limit 1')
    ).rows;
    await app.ctx.db.query(
      `insert into tools (workspace_id, name, kind, description, url, allowed_tools)
       values ${values.join(', ')}`,
      [workspace?.id, mcp.url],
    );
    await addTool(mcpTool({ name: 'the-200th' }));
    const over = await driver.api('post', '/tools').send(mcpTool({ name: 'the-201st' }));
    expect([over.status, over.body.code, over.body.limit]).toEqual([409, 'limit_reached', 200]);
    await app.ctx.db.query('delete from tools');
  });

  it('channels name tools in ai.tools (max_tool_rounds 1–10, default 4); a named tool is not deleted', async () => {
    const tool = await addTool(httpTool());
    const plain = await driver.createChannel({ name: 'plain' });
    expect((plain as unknown as { ai: unknown }).ai).toMatchObject({
      tools: [],
      max_tool_rounds: 4,
    });
    const unknown = await driver.api('post', '/channels').send({
      name: 'asks',
      template: 't',
      ai: { tools: ['weather', 'nowhere'] },
    });
    expect([unknown.status, unknown.body.code, unknown.body.tools]).toEqual([
      400,
      'unknown_tool',
      ['nowhere'],
    ]);
    const channel = await driver.createChannel({
      name: 'asks',
      ai: { tools: ['weather'], max_tool_rounds: 2 },
    });
    expect((channel as unknown as { ai: unknown }).ai).toMatchObject({
      tools: ['weather'],
      max_tool_rounds: 2,
    });
    for (const ai of [
      { max_tool_rounds: 0 },
      { max_tool_rounds: 11 },
      { tools: Array.from({ length: 17 }, (_, i) => `t${i}`) },
      { tools: ['weather', 'weather'] },
    ]) {
      const res = await driver.updateChannel(channel.id, { ai });
      expect([res.status, res.body.code], JSON.stringify(ai)).toEqual([400, 'validation_failed']);
    }
    const patchUnknown = await driver.updateChannel(channel.id, { ai: { tools: ['gone'] } });
    expect([patchUnknown.status, patchUnknown.body.code]).toEqual([400, 'unknown_tool']);

    const inUse = await driver.api('delete', `/tools/${tool.id}`);
    expect([inUse.status, inUse.body.code, inUse.body.channels]).toEqual([
      409,
      'tool_in_use',
      ['asks'],
    ]);
    const rename = await driver.api('patch', `/tools/${tool.id}`).send({ name: 'renamed' });
    expect([rename.status, rename.body.code]).toEqual([409, 'tool_in_use']);

    const cleared = await driver.updateChannel(channel.id, {
      ai: { tools: null, max_tool_rounds: null },
    });
    expect(cleared.body.ai).toMatchObject({ tools: [], max_tool_rounds: 4 });
    await driver.api('delete', `/tools/${tool.id}`).expect(204);
    await removeAll();
  });

  it("checks a trial's candidate tools against the workspace too", async () => {
    await addTool(httpTool());
    const channel = await driver.createChannel({ name: 'tried' });
    expect((await driver.sendEvent(channel.webhook_url, { order: { id: 1 } })).status).toBe(200);
    const trial = (ai: object) =>
      driver.api('post', `/channels/${channel.id}/trials`).send({ ai, events: { last: 1 } });
    const unknown = await trial({ tools: ['nowhere'] });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'unknown_tool']);
    expect((await trial({ tools: ['weather'], max_tool_rounds: 3 })).status).toBe(202);
  });

  it('clears stored headers when the url changes without headers in the same PATCH', async () => {
    const tool = await addTool(httpTool({ headers: { 'X-Key': HEADER_SECRET } }));
    const same = await driver.api('patch', `/tools/${tool.id}`).send({ description: 'again' });
    expect(same.body.headers_set).toEqual(['X-Key']);
    const sameUrl = await driver.api('patch', `/tools/${tool.id}`).send({ url: tool.url });
    expect(sameUrl.body.headers_set).toEqual(['X-Key']);
    const moved = await driver
      .api('patch', `/tools/${tool.id}`)
      .send({ url: `${endpoint.baseUrl}/elsewhere` });
    expect(moved.status).toBe(200);
    expect(moved.body.headers_set).toEqual([]);
    const movedWith = await driver
      .api('patch', `/tools/${tool.id}`)
      .send({ url: `${endpoint.baseUrl}/third`, headers: { 'X-Other': 'v-1234567890' } });
    expect(movedWith.body.headers_set).toEqual(['X-Other']);
    const cleared = await driver.api('patch', `/tools/${tool.id}`).send({ headers: null });
    expect(cleared.body.headers_set).toEqual([]);
    await removeAll();
  });

  it('keeps header values and a URL query token out of a dump of the database', async () => {
    const url = `${endpoint.baseUrl}/weather?token=${QUERY_TOKEN}&city={{input.city}}`;
    await addTool(httpTool({ url, headers: { Authorization: `Bearer ${HEADER_SECRET}` } }));
    await addTool(
      mcpTool({ url: `${mcp.url}?key=${QUERY_TOKEN}`, headers: { 'X-Mcp': HEADER_SECRET } }),
    );
    const { rows } = await app.ctx.db.query<{ url: string; headers: string }>(
      'select url, headers from tools',
    );
    for (const row of rows) {
      expect(row.url).toMatch(/^enc:v1:/);
      expect(row.headers).toMatch(/^enc:v1:/);
    }
    const dump = await databaseDump(app.database.db, app.database.url);
    expect(foundIn(dump, HEADER_SECRET)).toEqual([]);
    expect(foundIn(dump, QUERY_TOKEN)).toEqual([]);
    // Read back as given: the query is no password.
    expect((await driver.api('get', '/tools').expect(200)).body.data[1].url).toBe(url);
    await removeAll();
  });

  describe('the test of an http tool', () => {
    it('makes one call: method, URL-encoded placeholders, JSON body, Idempotency-Key and headers', async () => {
      endpoint.answer = { status: 200, body: { forecast: 'sunny' } };
      const tool = await addTool(httpTool({ headers: { 'X-Key': HEADER_SECRET } }));
      const input = { city: 'São Paulo/Centro', days: 2 };
      const res = await driver.api('post', `/tools/${tool.id}/test`).send({ input }).expect(200);
      expect(res.body).toEqual({
        ok: true,
        http_status: 200,
        latency_ms: expect.any(Number),
        result: '{"forecast":"sunny"}',
      });
      expect(endpoint.requests).toHaveLength(1);
      const [request] = endpoint.requests;
      expect(request?.method).toBe('POST');
      expect(request?.url).toBe('/weather/S%C3%A3o%20Paulo%2FCentro?days=2');
      expect(request?.body).toBe(JSON.stringify(input));
      expect(request?.headers['content-type']).toBe('application/json');
      expect(request?.headers['x-key']).toBe(HEADER_SECRET);
      const { createHash } = await import('node:crypto');
      const h = createHash('sha256')
        .update(`weather\n${JSON.stringify(input)}`)
        .digest('hex')
        .slice(0, 16);
      expect(request?.headers['idempotency-key']).toBe(`hp-test-${h}`);

      await driver.api('patch', `/tools/${tool.id}`).send({ method: 'GET' }).expect(200);
      await driver.api('post', `/tools/${tool.id}/test`).send({ input }).expect(200);
      expect(endpoint.requests[1]?.method).toBe('GET');
      expect(endpoint.requests[1]?.body).toBe('');
      expect(endpoint.requests[1]?.headers['content-type']).toBeUndefined();
      await removeAll();
    });

    it('checks the input against input_schema first (400, nothing sent)', async () => {
      const tool = await addTool(httpTool());
      for (const body of [
        { input: { days: 2 } },
        { input: { city: 'x', extra: 1 } },
        { input: 'x' },
      ]) {
        const res = await driver.api('post', `/tools/${tool.id}/test`).send(body);
        expect([res.status, res.body.code], JSON.stringify(body)).toEqual([
          400,
          'validation_failed',
        ]);
      }
      expect(endpoint.requests).toHaveLength(0);
      await removeAll();
    });

    it('answers ok: false with the status for a non-2xx answer, header values cut out', async () => {
      endpoint.answer = { status: 401, body: { error: `bad key ${HEADER_SECRET}` } };
      const tool = await addTool(httpTool({ headers: { 'X-Key': HEADER_SECRET } }));
      const res = await driver
        .api('post', `/tools/${tool.id}/test`)
        .send({ input: { city: 'Oslo' } })
        .expect(200);
      expect(res.body).toEqual({
        ok: false,
        http_status: 401,
        error: expect.stringMatching(/^HTTP 401: /),
      });
      expect(res.body.error).toContain('bad key [secret]');
      expect(res.body.error).not.toContain(HEADER_SECRET);
      // A result echoing a header's value is cut the same way.
      endpoint.answer = { status: 200, body: `echo ${HEADER_SECRET}` };
      const echoed = await driver
        .api('post', `/tools/${tool.id}/test`)
        .send({ input: { city: 'Oslo' } })
        .expect(200);
      expect(echoed.body.result).toBe('echo [secret]');
      await removeAll();
    });

    it('cuts a result at 16,384 characters, then [cut]', async () => {
      endpoint.answer = { status: 200, body: 'y'.repeat(20_000) };
      const tool = await addTool(httpTool());
      const res = await driver
        .api('post', `/tools/${tool.id}/test`)
        .send({ input: { city: 'Oslo' } })
        .expect(200);
      expect(res.body.result).toBe(`${'y'.repeat(16_384)}[cut]`);
      await removeAll();
    });
  });

  describe('the test of an mcp tool', () => {
    it('initializes a session with a real MCP server, lists its tools, and ends the session', async () => {
      const tool = await addTool(mcpTool({ headers: { 'X-Mcp-Key': HEADER_SECRET } }));
      const res = await driver.api('post', `/tools/${tool.id}/test`).send({}).expect(200);
      expect(res.body).toEqual({
        ok: true,
        tools: [
          { name: 'weather', description: 'The weather of a city', allowed: true },
          { name: 'forecast', description: 'Three days of weather', allowed: false },
          { name: 'time', description: 'The time now', allowed: false },
        ],
      });
      // Every request carried the tool's headers; the session was ended with a DELETE.
      expect(mcp.requests.length).toBeGreaterThanOrEqual(3);
      for (const request of mcp.requests) expect(request.headers['x-mcp-key']).toBe(HEADER_SECRET);
      expect(mcp.requests.map((r) => r.method)).toContain('DELETE');
      expect(mcp.openSessions).toBe(0);
      const withInput = await driver.api('post', `/tools/${tool.id}/test`).send({ input: {} });
      expect([withInput.status, withInput.body.code]).toEqual([400, 'validation_failed']);
      await removeAll();
    });

    it('answers ok: false when the server cannot be reached, secrets cut', async () => {
      const tool = await addTool(
        mcpTool({ url: `${endpoint.baseUrl}/not-mcp?key=${QUERY_TOKEN}` }),
      );
      endpoint.answer = { status: 500, body: `no such thing ${QUERY_TOKEN}` };
      const res = await driver.api('post', `/tools/${tool.id}/test`).send({}).expect(200);
      expect(res.body.ok).toBe(false);
      expect(typeof res.body.error).toBe('string');
      expect(res.body.error).not.toContain(QUERY_TOKEN);
      await removeAll();
    });
  });

  it('follows no redirect (http and mcp): the 3xx is the answer', async () => {
    endpoint.answer = { status: 302, body: '', headers: { location: `${mcp.url}` } };
    const http = await addTool(httpTool());
    const server = await addTool(mcpTool({ url: `${endpoint.baseUrl}/moved` }));
    const one = await driver
      .api('post', `/tools/${http.id}/test`)
      .send({ input: { city: 'Oslo' } })
      .expect(200);
    expect(one.body).toMatchObject({ ok: false, http_status: 302 });
    const two = await driver.api('post', `/tools/${server.id}/test`).send({}).expect(200);
    expect(two.body.ok).toBe(false);
    expect(endpoint.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
    expect(mcp.requests).toHaveLength(0);
  });

  describe('on an instance without TOOLS_ALLOW_PRIVATE, on the same database', () => {
    const { driver: strict } = useTestApp({ database: () => app.database });

    it('refuses private addresses when saved, naming TOOLS_ALLOW_PRIVATE only', async () => {
      for (const body of [httpTool(), mcpTool(), httpTool({ url: 'http://169.254.169.254/x' })]) {
        const res = await strict.api('post', '/tools').send(body);
        expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
        expect(res.body.detail).toMatch(/^url: refused: .*TOOLS_ALLOW_PRIVATE=true/);
        expect(res.body.detail).not.toMatch(/DELIVERY_ALLOW_PRIVATE|PROVIDERS_ALLOW_PRIVATE/);
      }
      const saved = await addTool(httpTool({ url: 'https://example.com/weather' }));
      const patch = await strict
        .api('patch', `/tools/${saved.id}`)
        .send({ url: 'http://localhost:8080/x' });
      expect([patch.status, patch.body.code]).toEqual([400, 'validation_failed']);
      expect(patch.body.detail).toContain('TOOLS_ALLOW_PRIVATE=true');
      await removeAll();
    });

    it('refuses them at connect time too (http and mcp), nothing reaching the server', async () => {
      const http = await addTool(httpTool());
      const server = await addTool(mcpTool());
      const one = await strict
        .api('post', `/tools/${http.id}/test`)
        .send({ input: { city: 'Oslo' } })
        .expect(200);
      expect(one.body.ok).toBe(false);
      expect(one.body.error).toMatch(/refused unless .*TOOLS_ALLOW_PRIVATE=true/);
      const two = await strict.api('post', `/tools/${server.id}/test`).send({}).expect(200);
      expect(two.body.ok).toBe(false);
      expect(two.body.error).toMatch(/refused unless .*TOOLS_ALLOW_PRIVATE=true/);
      expect(two.body.error).not.toMatch(/DELIVERY_ALLOW_PRIVATE|PROVIDERS_ALLOW_PRIVATE/);
      expect(endpoint.requests).toHaveLength(0);
      expect(mcp.requests).toHaveLength(0);
      await removeAll();
    });
  });

  describe('with ALLOW_PRIVATE_NETWORK, on the same database', () => {
    const { driver: network } = useTestApp({
      env: { ALLOW_PRIVATE_NETWORK: 'true' },
      database: () => app.database,
    });
    const { driver: strictAlone } = useTestApp({
      env: { ALLOW_PRIVATE_NETWORK: 'true', TOOLS_ALLOW_PRIVATE: 'false' },
      database: () => app.database,
    });

    it('allows private addresses, unless TOOLS_ALLOW_PRIVATE=false is set alone', async () => {
      await network.api('post', '/tools').send(httpTool()).expect(201);
      const refused = await strictAlone.api('post', '/tools').send(mcpTool());
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toContain('TOOLS_ALLOW_PRIVATE=true');
      await removeAll();
    });
  });

  // Last: every test above sent these secrets to the service, and had them echoed back.
  it('shows no header value or URL token in the log', () => {
    expect(foundIn(app.logText(), HEADER_SECRET)).toEqual([]);
    expect(foundIn(app.logText(), QUERY_TOKEN)).toEqual([]);
  });
});
