import { createServer } from 'node:http';
import { connect } from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { applyHttpLimits } from '../../src/platform/http-limits.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const BODY_TIMEOUT_MS = 500;
const { driver } = useTestApp({ env: { BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) } });
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

/**
 * A sender that announces a body and sends it one byte at a time; resolves to what it got back,
 * when, and whether the server closed the connection.
 */
function dribble(url: string): Promise<{ answer: string; ms: number; closed: boolean }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  const started = performance.now();
  let answer = '';
  let answeredAt = 0;
  socket.write(
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
  );
  const drip = setInterval(() => socket.write(' '), 100);
  return new Promise((resolve) => {
    socket.on('data', (chunk) => {
      answer += chunk;
      answeredAt ||= performance.now();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ answer, ms: answeredAt - started, closed: true });
    });
    setTimeout(() => {
      clearInterval(drip);
      socket.destroy();
      resolve({ answer, ms: answeredAt - started, closed: false });
    }, 10_000).unref();
  });
}

it('answers a body that arrives too slowly 408 request_timeout, closes the connection, and stores nothing', async () => {
  const results = await Promise.all(Array.from({ length: 20 }, () => dribble(channel.webhook_url)));
  for (const result of results) {
    expect(result.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(result.answer).toContain('application/problem+json');
    expect(result.answer).toContain('"code":"request_timeout"');
    expect(result.closed).toBe(true);
    expect(result.ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    expect(result.ms).toBeLessThan(BODY_TIMEOUT_MS + 2_000);
  }
  expect(await driver.eventsOf(channel.id)).toEqual([]);
  // The receiver goes on answering everyone else.
  expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
  console.log(
    `slow bodies: 20 senders dribbling a byte every 100 ms answered 408 after ${Math.round(Math.min(...results.map((r) => r.ms)))}–${Math.round(Math.max(...results.map((r) => r.ms)))} ms (BODY_TIMEOUT_MS=${BODY_TIMEOUT_MS}), connections closed, nothing stored`,
  );
});

it('sets Node’s own limits on reading a request deliberately, behind the receiver’s 408', () => {
  const server = createServer();
  applyHttpLimits(server, { bodyTimeoutMs: 30_000 });
  expect(server.requestTimeout).toBe(35_000);
  expect(server.headersTimeout).toBe(20_000);
  applyHttpLimits(server, { bodyTimeoutMs: BODY_TIMEOUT_MS });
  expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout);
});
