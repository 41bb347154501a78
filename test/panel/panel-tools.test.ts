import { afterEach, describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { McpTestServer, ToolEndpoint } from '../support/tool-servers.js';
import { ADMIN_ENV, inlineCode, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const endpoint = useFixture(() => ToolEndpoint.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const mcp = useFixture(() => McpTestServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, TOOLS_ALLOW_PRIVATE: 'true' } });
const client = useSignedInAdmin(app);

const HEADER_SECRET = 'panel-tool-secret-4c1d8e2f9a7b3605';
const ORDER_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { order_id: { type: 'string' } },
  required: ['order_id'],
  additionalProperties: false,
});

interface ToolJson {
  id: string;
  name: string;
  headers_set: string[];
  [member: string]: unknown;
}

async function toolNamed(name: string): Promise<ToolJson> {
  const { body } = await driver.api('get', '/tools').expect(200);
  const found = (body.data as ToolJson[]).find((tool) => tool.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

function orderLookupForm(overrides: Record<string, string> = {}) {
  return {
    name: 'order_lookup',
    kind: 'http',
    description: "Looks an order up by its id: status, items, the customer's plan.",
    url: `${endpoint.baseUrl}/orders/{{input.order_id}}`,
    method: 'GET',
    input_schema: ORDER_SCHEMA,
    approval: 'never',
    timeout_ms: '5000',
    headers: `Authorization: Bearer ${HEADER_SECRET}\nX-Shop: main`,
    ...overrides,
  };
}

afterEach(async () => {
  await app.ctx.db.query('update channels set deleted_at = now() where deleted_at is null');
  await app.ctx.db.query('delete from tools');
});

describe('the Tools page', () => {
  it('is linked in the navigation and says there are no tools yet', async () => {
    const page = await client.page('/tools');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/tools" aria-current="page">Tools</a>');
    expect(page.text).toContain('id="no-tools"');
    expect(inlineCode(page.text)).toEqual([]);
  });

  it('adds an HTTP tool whose headers are never shown again, tests it and edits it', async () => {
    const added = await client.form('/tools', orderLookupForm());
    expect(added.status, added.text).toBe(303);
    const tool = await toolNamed('order_lookup');
    expect(added.headers.location).toBe(`/tools/${tool.id}`);
    expect(tool).toMatchObject({
      kind: 'http',
      method: 'GET',
      timeout_ms: 5000,
      approval: 'never',
      safe_in_trials: false,
      headers_set: ['Authorization', 'X-Shop'],
      input_schema: JSON.parse(ORDER_SCHEMA),
    });

    const list = await client.page('/tools');
    expect(list.text).toContain('data-tool="order_lookup"');
    const page = await client.page(`/tools/${tool.id}`);
    expect(page.text).toContain('(set: Authorization, X-Shop; leave empty to keep them)');
    for (const html of [list.text, page.text]) expect(html).not.toContain(HEADER_SECRET);

    // Test: one real call with the arguments, the stored headers sent; the result shown.
    endpoint.answer = { status: 200, body: { status: 'shipped', items: 2 } };
    const tested = await client.form(`/tools/${tool.id}/test`, { input: '{"order_id": "A-17"}' });
    expect(tested.status).toBe(200);
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]).toMatchObject({ method: 'GET', url: '/orders/A-17' });
    expect(endpoint.requests[0]?.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    expect(unescapeHtml(tested.text)).toMatch(/HTTP 200 in \d+ ms/);
    expect(unescapeHtml(tested.text)).toContain('{"status":"shipped","items":2}');

    // Arguments the schema refuses are shown beside the field; nothing is sent.
    const refused = await client.form(`/tools/${tool.id}/test`, { input: '{"order": 17}' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="input-error">[^<]*the input/);
    expect(endpoint.requests).toHaveLength(1);

    // An empty headers field keeps the headers; the other members change.
    const saved = await client.form(
      `/tools/${tool.id}`,
      orderLookupForm({ headers: '', approval: 'always', safe_in_trials: '1' }),
    );
    expect(saved.status, saved.text).toBe(303);
    expect(await toolNamed('order_lookup')).toMatchObject({
      approval: 'always',
      safe_in_trials: true,
      headers_set: ['Authorization', 'X-Shop'],
    });

    // "Remove the headers" clears them.
    await client.form(`/tools/${tool.id}`, orderLookupForm({ headers: '', clear_headers: '1' }));
    expect((await toolNamed('order_lookup')).headers_set).toEqual([]);
  });

  it('shows what it refuses beside the fields and keeps what was typed', async () => {
    const badJson = await client.form('/tools', orderLookupForm({ input_schema: '{"type": ' }));
    expect(badJson.status).toBe(400);
    expect(badJson.text).toContain('id="input_schema-error"');
    expect(badJson.text).toContain(
      'Looks an order up by its id: status, items, the customer&#39;s',
    );

    const badHeader = await client.form('/tools', orderLookupForm({ headers: 'no colon here' }));
    expect(badHeader.status).toBe(400);
    expect(badHeader.text).toContain('id="headers-error"');

    const notAnObject = await client.form(
      '/tools',
      orderLookupForm({ input_schema: '{"type": "string"}' }),
    );
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.text).toMatch(/id="input_schema-error">must describe an object/);

    await client.form('/tools', orderLookupForm()).expect(303);
    const taken = await client.form('/tools', orderLookupForm());
    expect(taken.status).toBe(409);
    expect(taken.text).toMatch(/id="name-error">This workspace already has a tool named/);

    const { body } = await driver.api('get', '/tools').expect(200);
    expect(body.data).toHaveLength(1);
  });

  it('adds an MCP server and lists its tools with what the model is offered', async () => {
    const added = await client.form('/tools', {
      name: 'weather',
      kind: 'mcp',
      description: 'Weather tools',
      url: mcp.url,
      allowed_tools: 'weather\nforecast',
      approval: 'never',
      timeout_ms: '10000',
      headers: '',
    });
    expect(added.status, added.text).toBe(303);
    const tool = await toolNamed('weather');
    expect(tool.allowed_tools).toEqual(['weather', 'forecast']);

    const tested = await client.form(`/tools/${tool.id}/test`);
    expect(tested.status).toBe(200);
    const rows = [
      ...tested.text.matchAll(/data-server-tool="([^"]+)">.*?<td>(Yes|No)<\/td><\/tr>/g),
    ];
    expect(rows.map(([, name, offered]) => `${name}: ${offered}`)).toEqual([
      'weather: Yes',
      'forecast: Yes',
      'time: No',
    ]);
  });

  it('refuses to delete a tool a channel offers, names the channel, then deletes it', async () => {
    await client.form('/tools', orderLookupForm()).expect(303);
    const tool = await toolNamed('order_lookup');
    const channel = await driver.createChannel({
      name: 'Support',
      ai: { tools: ['order_lookup'] },
    });

    const page = await client.page(`/tools/${tool.id}`);
    expect(page.text).toMatch(/Offered by <a href="\/channels\/\d+">Support<\/a>/);
    const refused = await client.form(`/tools/${tool.id}/delete`);
    expect(refused.status).toBe(409);
    expect(unescapeHtml(refused.text)).toContain('is named by the channel "Support"');

    await driver
      .api('patch', `/channels/${channel.id}`)
      .send({ ai: { tools: [] } })
      .expect(200);
    const deleted = await client.form(`/tools/${tool.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.location).toBe('/tools');
    await driver.api('get', `/tools/${tool.id}`).expect(404);
  });
});
