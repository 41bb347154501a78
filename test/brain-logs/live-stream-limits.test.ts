import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/platform/secrets.js';
import { ADMIN_ENV, cookieSet, PanelClient } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useTestApp } from '../support/harness.js';
import { SseClient } from '../support/sse-client.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
let big: ChannelJson;
const open: SseClient[] = [];

beforeAll(async () => {
  big = await driver.createChannel({ name: 'Big', template: 'Order {{n}}' });
});

afterAll(() => {
  for (const client of open) client.close();
});

const API_OWNER = `api-key:${sha256Hex(TEST_ADMIN_KEY)}`;

async function stream(key = TEST_ADMIN_KEY): Promise<SseClient> {
  const client = await SseClient.open(`${app.baseUrl}/api/v1/events/stream`, {
    Authorization: `Bearer ${key}`,
  });
  open.push(client);
  return client;
}

/** A stream request on a raw socket that reads nothing after its request is sent. */
function stalledStream(path: string, headers: string): Promise<Socket> {
  const { hostname, port } = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.pause();
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${headers}\r\n`);
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

/** Resolves once the socket has ended (reading whatever was left of the stream). */
function closedOnceRead(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.closed) return resolve();
    socket.on('close', () => resolve());
    socket.resume();
  });
}

/** A payload of about `bytes`, with quotes that double in size as a JSON string. */
const bigPayload = (n: number, bytes: number) =>
  `{"n":${n},"text":"${'ab\\"cd '.repeat(Math.floor(bytes / 8))}"}`;

describe('a live stream whose client does not read', () => {
  it('is ended once about 1 MB waits for it, while a reading client gets every event', async () => {
    const reader = await stream();
    const stalled = await stalledStream(
      '/api/v1/events/stream',
      `Authorization: Bearer ${TEST_ADMIN_KEY}\r\n`,
    );
    await eventually(() => app.ctx.liveStreams.holding(API_OWNER) === 2, { what: 'two streams' });
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);

    const ids: string[] = [];
    for (let n = 1; n <= 40; n++) {
      const res = await driver.sendEvent(big.webhook_url, bigPayload(n, 900 * 1024));
      expect(res.status).toBe(200);
      ids.push(res.body.event_id as string);
    }
    // The reader is not held back by the stalled client.
    for (const id of ids) await reader.waitFor((message) => message.data.includes(`"id":"${id}"`));

    // The server let the stalled stream go: its slot is free, its socket ends.
    await eventually(() => app.ctx.liveStreams.holding(API_OWNER) === 1, {
      what: 'the stalled stream to be ended',
    });
    clearInterval(sampler);
    await closedOnceRead(stalled);
    expect(stalled.closed).toBe(true);
    // 40 messages of about 1.8 MB each were never read; they are not kept for the client.
    expect((rssPeak - rssBefore) / 2 ** 20).toBeLessThan(300);
  }, 60_000);
});

describe('STREAMS_PER_KEY', () => {
  it('lets one API key hold 10 live streams; the 11th is 429 until one closes', async () => {
    for (const client of open.splice(0)) client.close();
    await eventually(() => app.ctx.liveStreams.holding(API_OWNER) === 0, { what: 'no streams' });
    const ten = [];
    for (let i = 0; i < 10; i++) ten.push(await stream());
    expect(ten.map((client) => client.status)).toEqual(Array(10).fill(200));

    const refused = await fetch(`${app.baseUrl}/api/v1/events/stream`, {
      headers: { Authorization: `Bearer ${TEST_ADMIN_KEY}` },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ status: 429, code: 'too_many_streams' });

    // Another key of the same workspace has slots of its own.
    const { key } = await app.ctx.apiKeys.create(app.ctx.defaultWorkspaceId, 'second');
    expect((await stream(key)).status).toBe(200);

    ten[0]?.close();
    const again = await eventually(
      async () => {
        const client = await stream();
        if (client.status === 200) return client;
        client.close();
        return undefined;
      },
      { what: 'a freed slot' },
    );
    expect(again.status).toBe(200);
  });

  it('counts a panel session’s live tails the same way', async () => {
    const panel = new PanelClient(app);
    const session = cookieSet(await panel.signIn(), 'hookprompt_session');
    const tail = () =>
      SseClient.open(`${app.baseUrl}/logs/stream`, {
        Cookie: `hookprompt_session=${session}`,
        Accept: 'text/event-stream',
      });
    const ten = [];
    for (let i = 0; i < 10; i++) ten.push(await tail());
    open.push(...ten);
    expect(ten.map((client) => client.status)).toEqual(Array(10).fill(200));
    const refused = await tail();
    open.push(refused);
    expect(refused.status).toBe(429);
  });
});
