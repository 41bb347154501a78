import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { McpTestServer } from '../support/tool-servers.js';

const mcp = useFixture(() => McpTestServer.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver, ai } = useTestApp({ ai: true, env: { TOOLS_ALLOW_PRIVATE: 'true' } });

/** An OpenAI answer asking for the server's weather tool. */
function askForWeather() {
  const answer = chatCompletion(null);
  Object.assign(answer.choices[0]?.message ?? {}, {
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'wx__weather', arguments: '{"city":"Oslo"}' },
      },
    ],
  });
  return { body: answer };
}

describe("an MCP server's tool list", () => {
  it('is listed once for the events of a minute, and again once the tool is saved', async () => {
    const tool = await driver
      .api('post', '/tools')
      .send({
        name: 'wx',
        kind: 'mcp',
        description: 'Weather',
        url: mcp.url,
        allowed_tools: ['weather'],
      })
      .expect(201);
    const channel = await driver.createChannel({
      name: 'Weather',
      template: '{{q}}',
      ai: { tools: ['wx'] },
    });
    const answer = async (q: string) => {
      ai.enqueue(askForWeather(), { body: chatCompletion(`Answer to ${q}`) });
      const sent = await driver.sendEvent(channel.webhook_url, { q });
      await createWorker(app.ctx).runOnce();
      const event = await driver.api('get', `/events/${sent.body.event_id}`).expect(200);
      expect(event.body.tool_calls.map((call: { status: string }) => call.status)).toEqual(['ok']);
      return event.body.reply as string;
    };
    const listed = () => mcp.rpcMethods.filter((method) => method === 'tools/list').length;

    expect(await answer('one')).toBe('Answer to one');
    expect(await answer('two')).toBe('Answer to two');
    // each event called the tool in a session of its own; the list was read for the first only
    expect(mcp.called).toHaveLength(2);
    expect(mcp.rpcMethods.filter((method) => method === 'initialize')).toHaveLength(2);
    expect(listed()).toBe(1);

    await driver
      .api('patch', `/tools/${tool.body.id}`)
      .send({ description: 'The weather' })
      .expect(200);
    expect(await answer('three')).toBe('Answer to three');
    expect(listed()).toBe(2);
  });
});
