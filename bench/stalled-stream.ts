/**
 * Memory of a server with a live stream whose client stopped reading: one
 * `GET /api/v1/events/stream` that reads nothing, then 40 webhooks of 900 KB answered by the echo
 * stand-in. Reports the server's RSS before, its peak (VmHWM) and after, and whether the server
 * ended the stalled stream.
 *
 * Run with `npx tsx bench/stalled-stream.ts`. The server runs on the embedded database; set
 * BENCH_DATABASE_URL (a PostgreSQL server; a scratch database is used and dropped) to run it on
 * PostgreSQL. BENCH_TEMPLATE sets the channel's template (default `Order {{n}}`);
 * BENCH_NO_STREAM=1 runs without the stream, for comparison.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createScratchDatabase, type ScratchDatabase } from './lib/scratch-database.js';
import { startServer } from './lib/server-process.js';

const API_KEY = 'bench-stalled-stream-key-0123456789';
const EVENTS = 40;
const PAYLOAD_BYTES = 900 * 1024;
const TEMPLATE = process.env.BENCH_TEMPLATE ?? 'Order {{n}}';
const GOAL_MIB = 300;

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A stream request on a raw socket that is never read: the server's writes pile up. */
function stalledStream(origin: string): Promise<{ socket: Socket; closed: () => boolean }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.pause();
      socket.write(
        `GET /api/v1/events/stream HTTP/1.1\r\nHost: ${hostname}\r\n` +
          `Authorization: Bearer ${API_KEY}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      resolve({ socket, closed: () => closed });
    });
    socket.on('close', () => (closed = true));
    socket.on('error', reject);
  });
}

async function main(): Promise<void> {
  let database: ScratchDatabase | undefined;
  if (process.env.BENCH_DATABASE_URL) {
    database = await createScratchDatabase(process.env.BENCH_DATABASE_URL, 'stream');
  }
  const server = await startServer({
    name: 'hookprompt',
    nodeArgs: ['--import', 'tsx', 'src/main.ts'],
    env: {
      ...(database ? { DATABASE_URL: database.url } : {}),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-bench-stream-')),
      ADMIN_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      ...(process.env.BENCH_ROLE ? { ROLE: process.env.BENCH_ROLE } : {}),
    },
    logFile: join(tmpdir(), 'hookprompt-bench-stalled-stream.log'),
  });
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.origin}/api/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    });
  let stream: Awaited<ReturnType<typeof stalledStream>> | undefined;
  try {
    const channel = (await (
      await api('/channels', {
        method: 'POST',
        body: JSON.stringify({ name: 'Big', template: TEMPLATE }),
      })
    ).json()) as { id: string; webhook_url: string };
    const hook = `${server.origin}${new URL(channel.webhook_url).pathname}`;

    // BENCH_NO_STREAM=1: the same run without the stream, for comparison.
    if (!process.env.BENCH_NO_STREAM) stream = await stalledStream(server.origin);
    await delay(500);
    const before = memory(server.pid);
    let highest = before.rss;
    const sampler = setInterval(() => (highest = Math.max(highest, memory(server.pid).rss)), 50);
    const started = performance.now();
    // Quotes double in size when the payload is written as a JSON string.
    const text = 'ab\\"cd '.repeat(Math.floor(PAYLOAD_BYTES / 8));
    for (let n = 1; n <= EVENTS; n++) {
      const res = await fetch(hook, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"n":${n},"text":"${text}"}`,
      });
      if (res.status !== 200) throw new Error(`webhook ${n} answered ${res.status}`);
      await res.arrayBuffer();
    }
    const unfinished = async () => {
      for (const status of ['pending', 'processing']) {
        const res = await api(`/events?status=${status}&limit=1`);
        if (((await res.json()) as { data: unknown[] }).data.length) return true;
      }
      return false;
    };
    while (!process.env.BENCH_ROLE && (await unfinished())) await delay(100);
    // The stream's reads follow the last change after a moment.
    await delay(2_000);
    clearInterval(sampler);
    const after = memory(server.pid);
    const ended = stream && (stream.closed() || (await endedOnResume(stream.socket)));
    const [load1, load5] = loadavg();
    console.log(
      [
        `events: ${EVENTS} × ${PAYLOAD_BYTES / 1024} KiB, template ${JSON.stringify(TEMPLATE)}, ` +
          `${database ? 'PostgreSQL' : 'embedded database'}, ${Math.round(performance.now() - started)} ms`,
        `server RSS: ${mib(before.rss)} before, peak ${mib(Math.max(after.peak, highest))}, ` +
          `${mib(after.rss)} after (goal ≤ ${GOAL_MIB} MiB)`,
        stream
          ? `stalled stream ended by the server: ${ended ? 'yes' : 'no'}`
          : 'no stream (BENCH_NO_STREAM)',
        `load average: ${load1?.toFixed(2)} ${load5?.toFixed(2)} (${process.env.BENCH_NOTE ?? ''})`,
      ].join('\n'),
    );
    if (Math.max(after.peak, highest) > GOAL_MIB * 2 ** 20) process.exitCode = 1;
  } finally {
    stream?.socket.destroy();
    await server.stop();
    await database?.drop();
  }
}

/** Reads what is left; a stream the server ended then closes, a live one stays open. */
async function endedOnResume(socket: Socket): Promise<boolean> {
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  socket.resume();
  return Promise.race([closed, delay(5_000).then(() => false)]);
}

await main();
