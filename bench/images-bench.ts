/**
 * Images from the payload (`ai.images`): what one image costs the worker, and what 100 events
 * of 4 images each, arriving at once, cost the service's memory.
 *
 * 1. Per image: fetch + checks + base64 of a 1 MB PNG (random pixels, so it does not compress),
 *    with the worker's own ImageFetcher, in this process; the image server runs in a child
 *    process so its CPU is not counted. CPU per image (`process.cpuUsage`, median of 60), and
 *    the memory one image holds: its bytes and their base64 while it is fetched, the base64
 *    alone while its event is asked (the growth of `external + heapUsed`, and of
 *    `arrayBuffers` for the bytes, after a full collection, with 20 held at once).
 *    If the service exits during a run, the run stops and says how (exit code or signal) with
 *    the end of its log.
 * 2. 100 events with 4 such images each (4 distinct URLs), posted at once to a real hookprompt
 *    (`ROLE=all`, sources through tsx, PostgreSQL, a fake OpenAI model answering after 200 ms):
 *    the service process's peak RSS above its idle RSS (sampled from /proc every 20 ms), for
 *    each WORKER_CONCURRENCY given (default 8); goal ≤ 400 MB. Nothing lost: every event
 *    replied, with 4 attachments `ok`, and the model asked once per event.
 *
 * Run with `npx tsx bench/images-bench.ts [concurrency...]` (PostgreSQL at BENCH_ADMIN_URL,
 * default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ImageFetcher } from '../src/attachments/image-fetcher.js';
import { pngImage } from '../test/support/image-files.js';
import { startFakeAiServer } from './lib/fake-ai-server.js';
import { startHookprompt } from './lib/hookprompt.js';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SIDE = 580;
const EVENTS = 100;
const IMAGES_PER_EVENT = 4;

if (process.argv[2] === 'image-server') serveImages();
else await main();

/** The child: the same 1 MB PNG at any path, as an image host would serve it. */
function serveImages(): void {
  const png = pngImage(SIDE, SIDE, () => [rand(), rand(), rand()]);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
    res.end(png);
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port, bytes: png.length });
  });
}

function rand(): number {
  return Math.floor(Math.random() * 256);
}

async function main(): Promise<void> {
  const concurrencies = process.argv.slice(2).map(Number).filter(Boolean);
  const child = fork(new URL(import.meta.url).pathname, ['image-server'], {
    execArgv: ['--import', 'tsx'],
  });
  const { port, bytes } = await new Promise<{ port: number; bytes: number }>((resolve) =>
    child.once('message', (message) => resolve(message as { port: number; bytes: number })),
  );
  const origin = `http://127.0.0.1:${port}`;
  try {
    console.log(`image: a ${SIDE} × ${SIDE} PNG of random pixels, ${bytes} bytes`);
    await perImage(origin);
    for (const concurrency of concurrencies.length ? concurrencies : [8]) {
      await manyEvents(origin, concurrency);
    }
  } finally {
    child.kill();
  }
}

/** Part 1: CPU and memory of one image, fetched, checked and encoded as the worker does. */
async function perImage(origin: string): Promise<void> {
  const fetcher = new ImageFetcher({
    timeoutMs: 10_000,
    maxBytes: 5 * 1024 * 1024,
    allowPrivate: true,
  });
  const signal = new AbortController().signal;
  const one = async (i: number) => {
    const image = await fetcher.fetch(`${origin}/photo-${i}.png`, signal);
    return { mediaType: image.mediaType, data: image.bytes.toString('base64') };
  };
  for (let i = 0; i < 10; i++) await one(i);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < 60; i++) {
    const start = process.cpuUsage();
    const t0 = performance.now();
    await one(i);
    wall.push(performance.now() - t0);
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
  }
  // Collected before each reading: what is left is what the images hold, not garbage. A large
  // string made of a Buffer (the base64) is held outside V8's heap, as `external` memory, which
  // also counts the ArrayBuffers (the bytes).
  const held = () => {
    gc();
    const m = process.memoryUsage();
    return { bytes: m.arrayBuffers, all: m.external + m.heapUsed };
  };
  const before = held();
  const kept = [];
  for (let i = 0; i < 20; i++) {
    const image = await fetcher.fetch(`${origin}/photo-${i}.png`, signal);
    kept.push({ bytes: image.bytes, data: image.bytes.toString('base64') });
  }
  const after = held();
  const perBytes = (after.bytes - before.bytes) / kept.length;
  const perHeld = (after.all - before.all) / kept.length;
  console.log(
    `per image: CPU median ${median(cpu).toFixed(2)} ms (p90 ${quantile(cpu, 0.9).toFixed(2)}), wall median ${median(wall).toFixed(2)} ms; memory ${(perHeld / 1e6).toFixed(2)} MB while fetched (bytes + base64), ${((perHeld - perBytes) / 1e6).toFixed(2)} MB of it the base64 its event is asked with`,
  );
}

/** Part 2: 100 events of 4 images at once through the service: peak RSS above idle, nothing lost. */
async function manyEvents(origin: string, concurrency: number): Promise<void> {
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = await createScratchDatabase(adminUrl, 'images');
  const ai = await startFakeAiServer(200);
  const logFile = join(tmpdir(), `images-bench-${process.pid}.log`);
  const running = await startHookprompt({
    name: `images-${concurrency}`,
    entry: { nodeArgs: ['--import', 'tsx', 'src/main.ts'] },
    databaseUrl: database.url,
    logFile,
    startWithinMs: 180_000,
    env: {
      ROLE: 'all',
      ...ai.env,
      WORKER_CONCURRENCY: String(concurrency),
      ATTACHMENTS_ALLOW_PRIVATE: 'true',
    },
    channel: {
      template: 'What is in these pictures? {{note}}',
      ai: { images: ['payload.photos'] },
    },
  });
  try {
    await delay(2000);
    const idle = rss(running.server.pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(running.server.pid))), 20);
    const started = performance.now();
    const posted = await Promise.all(
      Array.from({ length: EVENTS }, (_, e) =>
        fetch(running.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            note: `event ${e}`,
            photos: Array.from({ length: IMAGES_PER_EVENT }, (_, i) => `${origin}/e${e}-${i}.png`),
          }),
        }).then((res) => res.status),
      ),
    );
    if (posted.some((status) => status !== 200)) throw new Error(`posted: ${posted.join(',')}`);
    let counts: Record<string, number> = {};
    for (;;) {
      const rows = await runSql<{ status: string; n: number }>(
        database.url,
        'select status, count(*)::int as n from events group by status',
      );
      counts = Object.fromEntries(rows.map((row) => [row.status, row.n]));
      if ((counts.replied ?? 0) + (counts.failed ?? 0) >= EVENTS) break;
      const ended = running.server.ended();
      if (ended) {
        const log = readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
        throw new Error(
          `the service exited (${ended}) during the run at WORKER_CONCURRENCY=${concurrency}, peak RSS ${mb(peak)} MB; ${JSON.stringify(counts)}; its log ends:\n${log}`,
        );
      }
      await delay(100);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const [whole] = await runSql<{ n: number }>(
      database.url,
      `select count(*)::int as n from events where status = 'replied'
         and jsonb_array_length(attachments) = ${IMAGES_PER_EVENT}
         and not exists (select from jsonb_array_elements(attachments) a where a->>'status' <> 'ok')`,
    );
    console.log(
      `${EVENTS} events × ${IMAGES_PER_EVENT} images, WORKER_CONCURRENCY=${concurrency}: idle RSS ${mb(idle)} MB, peak ${mb(peak)} MB, above idle ${mb(peak - idle)} MB (goal ≤ 400); ${JSON.stringify(counts)}, ${whole?.n ?? 0} replied with ${IMAGES_PER_EVENT} attachments ok, model asked ${ai.calls()} times; ${seconds.toFixed(1)} s`,
    );
  } finally {
    await running.server.stop();
    await ai.close();
    await database.drop();
  }
}

/** The process's resident memory; 0 once it has exited (the run then says so by what it lost). */
function rss(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function median(values: number[]): number {
  return quantile(values, 0.5);
}
