/**
 * What tracing costs the receiver: webhooks accepted per second by hookprompt with tracing on
 * (OTLP/HTTP protobuf, exported to a loopback collector) ÷ the same with tracing off. Closed loop
 * (autocannon) at --connections (128) for --duration seconds (10), in --rounds (3) interleaved
 * rounds (off, on; on, off; ...) so that a machine growing busier weighs on both; goal ≥ 0.85.
 * Each variant has a scratch database of its own on BENCH_DATABASE_URL's server, dropped at the
 * end. Prints one line per run and the ratio, with the load average before and after.
 *
 *   npm run bench:tracing                      the build (dist/), built first
 *   npm run bench:tracing -- --tsx --duration=3 --rounds=1     a quick look from the sources
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from './lib/build.js';
import { runClosedLoop } from './lib/closed-loop.js';
import { startHookprompt } from './lib/hookprompt.js';
import { orderPayload } from './lib/payload.js';
import { createScratchDatabase, type ScratchDatabase } from './lib/scratch-database.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '128' },
    tsx: { type: 'boolean', default: false },
  },
});
const seconds = Number(flags.duration);
const warmupSeconds = Number(flags.warmup);
const connections = Number(flags.connections);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const entry = flags.tsx ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js'];

/** A loopback OTLP/HTTP collector: takes every export, answers 200 as a real one does. */
async function startCollector() {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** One run: a fresh server on the variant's database, warmed up, then measured. */
async function measure(name: string, database: ScratchDatabase, env: Record<string, string>) {
  const { server, webhookUrl } = await startHookprompt({
    name,
    entry: { nodeArgs: entry },
    databaseUrl: database.url,
    logFile: join(tmpdir(), `hookprompt-tracing-bench-${name}.log`),
    env,
  });
  try {
    if (warmupSeconds > 0) await runClosedLoop(webhookUrl, orderPayload, 32, warmupSeconds);
    const result = await runClosedLoop(webhookUrl, orderPayload, connections, seconds);
    console.log(
      `${name.padEnd(12)} ${result.acceptedPerSecond.toFixed(0).padStart(6)}/s  p50 ${result.latency.p50.toFixed(1)} ms  p99 ${result.latency.p99.toFixed(1)} ms  non-200 ${JSON.stringify(result.non200)}`,
    );
    return result.acceptedPerSecond;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const load = () =>
    loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');
  console.log(`load average at the start: ${load()} (${cpus().length} cores)`);
  if (!flags.tsx) build();
  const collector = await startCollector();
  const databases = await Promise.all([
    createScratchDatabase(adminUrl, 'tracing_off'),
    createScratchDatabase(adminUrl, 'tracing_on'),
  ]);
  const [offDatabase, onDatabase] = databases as [ScratchDatabase, ScratchDatabase];
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
  const off: number[] = [];
  const on: number[] = [];
  try {
    for (let round = 0; round < Number(flags.rounds); round++) {
      const offFirst = round % 2 === 0;
      if (offFirst) off.push(await measure('tracing off', offDatabase, {}));
      on.push(await measure('tracing on', onDatabase, traced));
      if (!offFirst) off.push(await measure('tracing off', offDatabase, {}));
    }
  } finally {
    await collector.close();
    await Promise.all(databases.map((database) => database.drop()));
  }
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const ratio = mean(on) / mean(off);
  console.log(
    `\ningest with tracing on ÷ off: ${ratio.toFixed(3)} (${mean(on).toFixed(0)}/s ÷ ${mean(off).toFixed(0)}/s; goal ≥ 0.85: ${ratio >= 0.85 ? 'met' : 'not met'})`,
  );
  console.log(
    `collector received ${collector.received.exports} exports, ${collector.received.bytes} bytes`,
  );
  console.log(`load average at the end: ${load()}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
