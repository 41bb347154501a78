import { afterEach, describe, expect, it } from 'vitest';
import { MAX_WAITING_LOG_CHARS } from '../../src/platform/log-output.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

// The service as a real process, logging every request (LOG_LEVEL=info), behind log readers that
// keep up, stop reading, or go away.
const ADMIN_API_KEY = 'stalled-logs-admin-key-0123456789';
const SHUTDOWN_TIMEOUT_MS = 3_000;

let server: ServerProcess | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await server?.stop('SIGKILL');
  await database?.drop();
  server = database = undefined;
});

async function startServer(options: { unreadOutput?: boolean } = {}): Promise<ServerProcess> {
  if (testDatabaseUrl) database = await createTestDatabase();
  return startServerProcess(
    {
      DATABASE_URL: database?.url ?? 'memory://',
      ADMIN_API_KEY,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      RATE_LIMIT_PER_CHANNEL: '100000000',
      RATE_LIMIT_PER_IP: '100000000',
    },
    options,
  );
}

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server?.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
    signal: AbortSignal.timeout(5_000),
  });
}

async function createChannel(): Promise<{ id: string; webhook_url: string }> {
  const res = await api('/api/v1/channels', {
    method: 'POST',
    body: JSON.stringify({ name: 'Logs', template: 'Order {{order.id}}' }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; webhook_url: string };
}

/** Posts `count` webhooks, `concurrency` at a time; the statuses, and the slowest answer in ms. */
async function sendWebhooks(url: string, count: number, concurrency: number) {
  const statuses: number[] = [];
  let slowestMs = 0;
  let next = 0;
  const sender = async () => {
    while (next < count) {
      const started = Date.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ order: { id: next++ } }),
        signal: AbortSignal.timeout(5_000),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
      slowestMs = Math.max(slowestMs, Date.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  return { statuses, slowestMs };
}

/** `hookprompt_log_lines_dropped_total` from /metrics (undefined when it is not there). */
async function droppedLines(): Promise<number | undefined> {
  const res = await fetch(`${server?.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const match = /^hookprompt_log_lines_dropped_total (\d+)$/m.exec(await res.text());
  return match ? Number(match[1]) : undefined;
}

/** Milliseconds from SIGTERM to the process's end; `ms` is undefined if it outlives `waitMs`. */
async function stopAndTime(waitMs: number): Promise<{ ms?: number; code: unknown }> {
  const { child, exited } = server as ServerProcess;
  const sent = Date.now();
  child.kill('SIGTERM');
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve('still running'), waitMs)),
  ]);
  return code === 'still running' ? { code } : { ms: Date.now() - sent, code };
}

describe('a log reader that keeps up', () => {
  it('gets every request line, none dropped, and the last line on stop', async () => {
    server = await startServer();
    const channel = await createChannel();

    const { statuses } = await sendWebhooks(channel.webhook_url, 300, 32);
    expect(statuses.filter((status) => status === 200)).toHaveLength(300);
    expect(await droppedLines()).toBe(0);

    const stop = await stopAndTime(SHUTDOWN_TIMEOUT_MS * 2);
    expect(stop.code).toBe(0);
    const lines = server.output().trim().split('\n');
    const webhookLines = lines.filter((line) => line.includes('"url":"/hooks/[redacted]"'));
    expect(webhookLines).toHaveLength(300);
    expect(lines.at(-1)).toContain('"msg":"stopped"');
  }, 60_000);
});

describe('a log reader that stops reading', () => {
  it('costs log lines, counted, never answers or the end of the process', async () => {
    server = await startServer({ unreadOutput: true });
    const channel = await createChannel();

    // An outsider's long URLs (12 KB lines) queue twice what the process keeps for its reader.
    const longUrl = `${server.baseUrl}/api/v1/channels?${'x'.repeat(12_000)}`;
    const floodRequests = Math.ceil((2 * MAX_WAITING_LOG_CHARS) / 12_000);
    for (let sent = 0; sent < floodRequests; sent += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fetch(longUrl, { signal: AbortSignal.timeout(5_000) })),
      );
      expect(answers.every((res) => res.status === 401)).toBe(true);
    }
    // Soft: the end of the process is checked below, whatever this finds.
    expect.soft(await droppedLines()).toBeGreaterThan(0);

    const { statuses, slowestMs } = await sendWebhooks(channel.webhook_url, 20, 5);
    expect(statuses).toEqual(Array(20).fill(200));
    expect(slowestMs).toBeLessThan(2_000);
    const events = await api(`/api/v1/events?channel_id=${channel.id}&limit=100`);
    expect(((await events.json()) as { data: unknown[] }).data).toHaveLength(20);

    const stop = await stopAndTime(SHUTDOWN_TIMEOUT_MS * 2);
    expect(stop.ms, 'the process ended after SIGTERM').toBeDefined();
    expect(stop.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    console.log(
      `unread output: ${floodRequests} long-URL requests and 20 webhooks answered (slowest webhook ${slowestMs} ms), SIGTERM: exit ${String(stop.code)} after ${stop.ms} ms`,
    );
  }, 60_000);
});

describe('a log reader that goes away', () => {
  it('costs log lines, counted, never answers or the end of the process', async () => {
    server = await startServer();
    const channel = await createChannel();
    // The read end of the pipe is closed: every later write fails (EPIPE).
    server.child.stdout?.destroy();

    const { statuses } = await sendWebhooks(channel.webhook_url, 20, 5);
    expect(statuses).toEqual(Array(20).fill(200));
    expect(await droppedLines()).toBeGreaterThan(0);

    const stop = await stopAndTime(SHUTDOWN_TIMEOUT_MS * 2);
    expect(stop.ms, 'the process ended after SIGTERM').toBeDefined();
    expect(stop.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
  }, 60_000);
});
