import { describe, expect, it } from 'vitest';
import { openDescriptors, staysFlat } from '../support/open-descriptors.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { McpTestServer, ToolEndpoint } from '../support/tool-servers.js';

// Both servers keep idle connections open for a minute, as real ones do, so whatever the service
// leaves open stays open; this process holds both ends of each connection.
const endpoint = useFixture(() => ToolEndpoint.start(), { stop: (server) => server.close() });
const mcp = useFixture(() => McpTestServer.start(), { stop: (server) => server.close() });
const { driver } = useTestApp({ env: { TOOLS_ALLOW_PRIVATE: 'true' } });

describe('tool tests leave no connection open', () => {
  it('200 tests of an http tool', async () => {
    const { body: tool } = await driver
      .api('post', '/tools')
      .send({
        name: 'lookup',
        kind: 'http',
        description: 'Looks a thing up',
        url: `${endpoint.baseUrl}/lookup?id={{input.id}}`,
        input_schema: { type: 'object', properties: { id: { type: 'integer' } } },
        headers: { 'X-Key': 'k-0123456789' },
      })
      .expect(201);
    const testOnce = async (i: number) => {
      const res = await driver
        .api('post', `/tools/${tool.id as string}/test`)
        .send({ input: { id: i } });
      expect(res.body).toMatchObject({ ok: true, http_status: 200 });
    };
    for (let i = 0; i < 5; i++) await testOnce(i);
    const before = openDescriptors();
    for (let i = 0; i < 200; i++) await testOnce(i);
    expect(endpoint.requests).toHaveLength(205);
    await staysFlat(before);
  }, 120_000);

  it('200 tests of an mcp tool (a session each, ended)', async () => {
    const { body: tool } = await driver
      .api('post', '/tools')
      .send({
        name: 'weather-server',
        kind: 'mcp',
        description: 'Weather tools',
        url: mcp.url,
        allowed_tools: ['weather'],
      })
      .expect(201);
    const testOnce = async () => {
      const res = await driver.api('post', `/tools/${tool.id as string}/test`).send({});
      expect(res.body).toMatchObject({ ok: true });
    };
    for (let i = 0; i < 5; i++) await testOnce();
    const before = openDescriptors();
    for (let i = 0; i < 200; i++) await testOnce();
    expect(mcp.openSessions).toBe(0);
    await staysFlat(before);
  }, 180_000);
});
