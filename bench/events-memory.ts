/**
 * Memory of `GET /api/v1/events` with big payloads: 250 events of 900 KB (225 MB of payloads),
 * six clients paging through all of them at once with `limit=500`, twice. Before pages were
 * capped this answered 500 (`RangeError: Invalid string length`), and 150 such events took the
 * server from 359 MB to 2.2 GB of RSS (5.1 GB with six clients). Reports the server's RSS before,
 * its peak (VmHWM), the pages and the largest answer.
 *
 * Run with `npm run bench:memory` (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, names the server; a scratch database is used and
 * dropped).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';
import { startServer } from './lib/server-process.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = 'bench-memory-admin-key-0123456789';
const EVENTS = 250;
const PAYLOAD_BYTES = 900 * 1024;
const CLIENTS = 6;
const ROUNDS = 2;

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

async function main(): Promise<void> {
  const database = await createScratchDatabase(ADMIN_URL, 'memory');
  const server = await startServer({
    name: 'hookprompt',
    nodeArgs: ['--import', 'tsx', 'src/main.ts'],
    env: {
      DATABASE_URL: database.url,
      ADMIN_API_KEY: API_KEY,
      ROLE: 'web',
      LOG_LEVEL: 'warn',
      DATA_DIR: tmpdir(),
    },
    logFile: join(tmpdir(), 'hookprompt-bench-memory.log'),
  });
  try {
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.origin}/api/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      });
    const channel = (await (
      await api('/channels', {
        method: 'POST',
        body: JSON.stringify({ name: 'Big', template: '{{n}}' }),
      })
    ).json()) as { id: string };
    // JSON payloads with quotes, which double in size when written as JSON strings.
    await runSql(
      database.url,
      `insert into events (workspace_id, channel_id, status, payload, received_at)
       select workspace_id, id, 'replied',
              '{"n":' || n || ',"text":"' || repeat('ab\\"cd ', $2::integer / 7) || '"}',
              now() - n * interval '1 second'
       from channels, generate_series(1, $1::integer) as n where id = $3`,
      [EVENTS, PAYLOAD_BYTES, channel.id],
    );

    const before = memory(server.pid);
    let pages = 0;
    let largest = 0;
    let events = 0;
    const started = performance.now();
    const client = async () => {
      let cursor: string | null = null;
      do {
        const res = await api(`/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
        if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
        const text = await res.text();
        largest = Math.max(largest, Buffer.byteLength(text));
        const page = JSON.parse(text) as { data: unknown[]; next_cursor: string | null };
        events += page.data.length;
        pages++;
        cursor = page.next_cursor;
      } while (cursor);
    };
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(Array.from({ length: CLIENTS }, client));
    }
    const after = memory(server.pid);
    console.log(
      [
        `events: ${EVENTS} × ${PAYLOAD_BYTES / 1024} KiB payloads; ${CLIENTS} clients × ${ROUNDS} rounds paging with limit=500`,
        `pages: ${pages} (${events} events read, ${(events / pages).toFixed(1)} per page), largest answer ${mib(largest)}, ${Math.round(performance.now() - started)} ms`,
        `server RSS: ${mib(before.rss)} before, peak ${mib(after.peak)} (limit 600 MiB)`,
      ].join('\n'),
    );
    if (after.peak > 600 * 2 ** 20) process.exitCode = 1;
  } finally {
    await server.stop();
    await database.drop();
  }
}

await main();
