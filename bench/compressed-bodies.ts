/**
 * Memory and CPU of compressed webhook bodies sent to hurt: rounds of 100 concurrent brotli
 * bodies of a few dozen bytes that name a 16 MiB window (32 MiB of zeros, each over BODY_LIMIT
 * once decoded), and one body gzipped 1,000 times that says so in its Content-Encoding. Reports
 * the server's RSS before, its peak (VmHWM), the answers by status, and the server's CPU time
 * for the 1,000-times-gzipped body. Goal: a peak under 600 MiB on PostgreSQL. --encoding=gzip
 * sends gzip bodies of 32 MiB of zeros instead.
 *
 * Run with `npx tsx bench/compressed-bodies.ts` (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, names the server; a scratch database is used and
 * dropped). --rounds=<n> (5), --concurrency=<n> (100), --encoding=br|gzip (br).
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { createScratchDatabase } from './lib/scratch-database.js';
import { startServer } from './lib/server-process.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API_KEY = 'bench-compressed-admin-key-0123456789';
const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '100' },
    encoding: { type: 'string', default: 'br' },
  },
});
const ROUNDS = Number(options.rounds);
const CONCURRENCY = Number(options.concurrency);
const ENCODING = options.encoding === 'gzip' ? 'gzip' : 'br';

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The process's user + system CPU time so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command's ") ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** One POST on a connection of its own; resolves with the status and the Retry-After header. */
function post(url: string, body: Buffer, encoding: string) {
  return new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-encoding': encoding,
        'content-length': String(body.length),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }),
      );
    });
    req.end(body);
  });
}

async function main(): Promise<void> {
  const zeros = Buffer.alloc(32 * 2 ** 20);
  const bomb =
    ENCODING === 'gzip'
      ? zlib.gzipSync(zeros, { level: 9 })
      : zlib.brotliCompressSync(zeros, {
          params: {
            [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
            [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
          },
        });
  let layered = Buffer.from('{"layers":1000}');
  for (let i = 0; i < 1000; i++) layered = zlib.gzipSync(layered);

  const database = await createScratchDatabase(ADMIN_URL, 'compressed');
  const server = await startServer({
    name: 'hookprompt',
    nodeArgs: ['--import', 'tsx', 'src/main.ts'],
    env: {
      DATABASE_URL: database.url,
      ADMIN_API_KEY: API_KEY,
      ROLE: 'web',
      LOG_LEVEL: 'warn',
      DATA_DIR: tmpdir(),
      RATE_LIMIT_PER_CHANNEL: '100000000',
      RATE_LIMIT_PER_IP: '100000000',
    },
    logFile: join(tmpdir(), 'hookprompt-bench-compressed.log'),
  });
  try {
    const res = await fetch(`${server.origin}/api/v1/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Compressed', template: '{{n}}' }),
    });
    const { webhook_url: webhookUrl } = (await res.json()) as { webhook_url: string };
    const url = webhookUrl.replace(/^https?:\/\/[^/]+/, server.origin);

    const before = memory(server.pid);
    const statuses: Record<string, number> = {};
    let withoutRetryAfter = 0;
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from({ length: CONCURRENCY }, () => post(url, bomb, ENCODING)),
      );
      for (const { status, retryAfter } of answers) {
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 503 && retryAfter === undefined) withoutRetryAfter++;
      }
    }
    const elapsed = performance.now() - started;
    const after = memory(server.pid);

    const cpuBefore = cpuMs(server.pid);
    const layeredStarted = performance.now();
    const layeredAnswer = await post(url, layered, Array(1000).fill('gzip').join(', '));
    const layeredMs = performance.now() - layeredStarted;
    const layeredCpu = cpuMs(server.pid) - cpuBefore;

    console.log(
      [
        `${ENCODING} bodies: ${bomb.length} bytes each (32 MiB of zeros${ENCODING === 'br' ? ', 16 MiB window' : ''}), ${ROUNDS} rounds × ${CONCURRENCY} at once, ${Math.round(elapsed)} ms`,
        `answers: ${JSON.stringify(statuses)}${withoutRetryAfter ? `, ${withoutRetryAfter} 503 without Retry-After` : ''}`,
        `server RSS: ${mib(before.rss)} before, peak ${mib(after.peak)} (goal: under 600 MiB)`,
        `gzip listed 1,000 times (${layered.length} bytes): ${layeredAnswer.status} in ${Math.round(layeredMs)} ms, server CPU ${Math.round(layeredCpu)} ms`,
      ].join('\n'),
    );
    if (after.peak > 600 * 2 ** 20) process.exitCode = 1;
  } finally {
    await server.stop();
    await database.drop();
  }
}

await main();
