/**
 * Past one machine: 1, 2 and 4 `ROLE=web` processes plus one `ROLE=worker` on one PostgreSQL
 * and one Redis (REDIS_URL set, so the rate limits are counted in Redis, shared by all web
 * processes), as docs/scaling.md describes a deployment. The load, --connections (128) in all,
 * is spread evenly over the web processes' ports: one autocannon instance per port, each with
 * its share of the connections, all posting the same 1 KB order to one channel. The worker
 * answers every accepted event with the echo provider (no AI latency), so it works as hard as
 * the web tier feeds it.
 *
 * For each number of web processes: accepted/s in total, the worker's replies/s, CPU ms per
 * accepted webhook of each web process, of the worker, of the database's PostgreSQL backends, of
 * Redis and of the load generator, and the CPU they used together in cores: on a machine
 * whose cores are all busy, that sum says CPU is what saturates.
 *
 *   npm run bench:scale-out                           about 2 minutes on the 2-core VM
 *   npm run bench:scale-out -- --webs=1,2,4 --runs=2 --duration=10 --connections=128
 *
 * Also --tsx (run the sources), --no-build (dist/ as it is), --entry=<main.js>. BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres) and BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379) pick the servers. Results go to bench/results/scale-out-<time>.json
 * and are printed as a markdown table.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from './lib/build.js';
import { runClosedLoop, type ClosedLoopResult } from './lib/closed-loop.js';
import { hookpromptEnv, startHookprompt } from './lib/hookprompt.js';
import { totalOf } from './lib/latency.js';
import { orderPayload } from './lib/payload.js';
import {
  cpuBetween,
  cpuOfPids,
  machineCpu,
  pidsStartingWith,
  postgresBackends,
} from './lib/process-cpu.js';
import { formatStatusCounts } from './lib/report.js';
import { createScratchDatabase, runSql, type ScratchDatabase } from './lib/scratch-database.js';
import { projectRoot, startServer, type ServerProcess } from './lib/server-process.js';

const { values: flags } = parseArgs({
  options: {
    webs: { type: 'string', default: '1,2,4' },
    runs: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '128' },
    tsx: { type: 'boolean', default: false },
    entry: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});
const webCounts = flags.webs.split(',').map(Number);
const runs = Number(flags.runs);
const seconds = Number(flags.duration);
const connections = Number(flags.connections);
const warmupSeconds = 2;
if (![...webCounts, runs, seconds, connections].every((n) => Number.isInteger(n) && n > 0))
  throw new Error('--webs, --runs, --duration and --connections take positive whole numbers');
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const entry = flags.entry
  ? [flags.entry]
  : flags.tsx
    ? ['--import', 'tsx', 'src/main.ts']
    : ['dist/main.js'];

const resultsDir = join(projectRoot, 'bench', 'results');
const logsDir = join(resultsDir, 'logs');
const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '-');
mkdirSync(logsDir, { recursive: true });
const logFile = (name: string) => join(logsDir, `${stamp}-scale-out-${name}.log`);

interface Run {
  webs: number;
  run: number;
  seconds: number;
  accepted: number;
  acceptedPerSecond: number;
  /** Each port's share: its accepted/s and p99. */
  perWeb: { acceptedPerSecond: number; p50: number; p99: number }[];
  non200: Record<string, number>;
  /** Events the worker finished during the run, per second. */
  repliesPerSecond: number;
  /** CPU ms per accepted webhook. */
  cpuMsPerRequest: {
    webs: number[];
    websTotal: number;
    worker: number;
    postgresBackends: number;
    /** Every PostgreSQL process: the backends, the WAL writer, the checkpointer... */
    postgresAll: number;
    redis: number;
    loadGenerator: number;
  };
  /** CPU each used over the run, in cores (1 = one core all the time). */
  cores: {
    webs: number;
    worker: number;
    postgres: number;
    redis: number;
    loadGenerator: number;
    sum: number;
    /** The whole machine, from /proc/stat: everything that ran, ours or not. */
    machine: number | undefined;
  };
}

const cleanups: (() => Promise<void>)[] = [];
process.once('SIGINT', () => {
  console.error('\ninterrupted: stopping servers and dropping scratch databases');
  void cleanUp().finally(() => process.exit(130));
});

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse())
    await cleanup().catch((e: unknown) => console.error(e));
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  console.log(
    `load average at the start: ${loadBefore.map((n) => n.toFixed(2)).join(' ')} (${cpus().length} cores)`,
  );
  const buildErrors = flags.tsx || flags.entry || flags['no-build'] ? false : build();
  const results: Run[] = [];
  for (const webs of webCounts) {
    const db = await createScratchDatabase(adminUrl, `scaleout${webs}`);
    cleanups.push(() => db.drop());
    const deployment = await deploy(db, webs);
    try {
      await load(deployment.urls, warmupSeconds);
      for (let run = 1; run <= runs; run++) {
        const result = await measure(db, deployment, run);
        console.log(line(result));
        results.push(result);
      }
    } finally {
      await deployment.stop();
      await db.drop();
    }
  }
  const report = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.versions.node, loadBefore, loadAfter: loadavg() },
    settings: {
      connections,
      seconds,
      warmupSeconds,
      entry: `node ${entry.join(' ')}`,
      buildErrors,
      redisUrl,
    },
    results,
  };
  const file = join(resultsDir, `scale-out-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `\nload average at the end: ${report.machine.loadAfter.map((n) => n.toFixed(2)).join(' ')}` +
      `\nresults: ${file}\n\n${markdown(results, loadBefore)}`,
  );
}

interface Deployment {
  webs: ServerProcess[];
  worker: ServerProcess;
  /** The channel's webhook URL on each web process. */
  urls: string[];
  stop(): Promise<void>;
}

/** `webs` web processes (the first creates the channel through the API) and one worker. */
async function deploy(db: ScratchDatabase, webs: number): Promise<Deployment> {
  const servers: ServerProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  };
  cleanups.push(stop);
  const first = await startHookprompt({
    name: 'web 1',
    entry: { nodeArgs: entry },
    databaseUrl: db.url,
    logFile: logFile(`${webs}-web-1`),
    env: { REDIS_URL: redisUrl },
  });
  servers.push(first.server);
  const env = hookpromptEnv(db.url, first.apiKey, { REDIS_URL: redisUrl });
  for (let i = 2; i <= webs; i++) {
    servers.push(
      await startServer({
        name: `web ${i}`,
        nodeArgs: entry,
        env,
        logFile: logFile(`${webs}-web-${i}`),
      }),
    );
  }
  const worker = await startServer({
    name: 'worker',
    nodeArgs: entry,
    env: { ...env, ROLE: 'worker' },
    logFile: logFile(`${webs}-worker`),
  });
  servers.push(worker);
  for (const web of servers.slice(0, webs)) {
    const ready = (await (await fetch(`${web.origin}/readyz`)).json()) as { redis?: string };
    if (ready.redis !== 'ok')
      throw new Error(`${web.name}: Redis is ${ready.redis ?? '?'}, not ok`);
  }
  const path = new URL(first.webhookUrl).pathname;
  return {
    webs: servers.slice(0, webs),
    worker,
    urls: servers.slice(0, webs).map((web) => `${web.origin}${path}`),
    stop,
  };
}

/** The load: `connections` spread evenly over the URLs, one closed loop per URL, at once. */
function load(urls: string[], duration: number): Promise<ClosedLoopResult[]> {
  return Promise.all(
    urls.map((url, i) =>
      runClosedLoop(
        url,
        orderPayload,
        Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0),
        duration,
      ),
    ),
  );
}

async function measure(db: ScratchDatabase, deployment: Deployment, run: number): Promise<Run> {
  await runSql(adminUrl, 'checkpoint');
  const replied = async () =>
    (
      await runSql<{ n: number }>(
        db.url,
        `select count(*)::int as n from events where status <> 'pending' and status <> 'processing'`,
      )
    )[0]?.n ?? 0;
  const webPids = deployment.webs.map((w) => w.pid);
  const snapshot = () => ({
    at: performance.now(),
    webs: cpuOfPids(webPids),
    worker: cpuOfPids([deployment.worker.pid]),
    backends: cpuOfPids(postgresBackends(db.name)),
    postgres: cpuOfPids(pidsStartingWith('postgres')),
    redis: cpuOfPids(pidsStartingWith('redis-server')),
    own: process.cpuUsage(),
    machine: machineCpu(),
  });
  const repliedBefore = await replied();
  const before = snapshot();
  const results = await load(deployment.urls, seconds);
  const after = snapshot();
  const repliedAfter = await replied();

  const wallMs = after.at - before.at;
  const accepted = results.reduce((sum, r) => sum + r.latency.count, 0);
  const answered = accepted + results.reduce((sum, r) => sum + totalOf(r.non200), 0);
  const non200: Record<string, number> = {};
  for (const r of results)
    for (const [status, n] of Object.entries(r.non200)) non200[status] = (non200[status] ?? 0) + n;
  const ms = {
    webs: webPids.map((pid) => (after.webs.get(pid) ?? 0) - (before.webs.get(pid) ?? 0)),
    worker: cpuBetween(before.worker, after.worker),
    backends: cpuBetween(before.backends, after.backends),
    postgres: cpuBetween(before.postgres, after.postgres),
    redis: cpuBetween(before.redis, after.redis),
    loadGenerator: (after.own.user + after.own.system - before.own.user - before.own.system) / 1000,
  };
  const websMs = ms.webs.reduce((a, b) => a + b, 0);
  const per = (x: number) => x / answered;
  const cores = (x: number) => x / wallMs;
  const machine =
    after.machine && before.machine
      ? (after.machine.busyMs - before.machine.busyMs) / wallMs
      : undefined;
  return {
    webs: deployment.webs.length,
    run,
    seconds: wallMs / 1000,
    accepted,
    acceptedPerSecond: results.reduce((sum, r) => sum + r.acceptedPerSecond, 0),
    perWeb: results.map((r) => ({
      acceptedPerSecond: r.acceptedPerSecond,
      p50: r.latency.p50,
      p99: r.latency.p99,
    })),
    non200,
    repliesPerSecond: (repliedAfter - repliedBefore) / (wallMs / 1000),
    cpuMsPerRequest: {
      webs: ms.webs.map(per),
      websTotal: per(websMs),
      worker: per(ms.worker),
      postgresBackends: per(ms.backends),
      postgresAll: per(ms.postgres),
      redis: per(ms.redis),
      loadGenerator: per(ms.loadGenerator),
    },
    cores: {
      webs: cores(websMs),
      worker: cores(ms.worker),
      postgres: cores(ms.postgres),
      redis: cores(ms.redis),
      loadGenerator: cores(ms.loadGenerator),
      sum: cores(websMs + ms.worker + ms.postgres + ms.redis + ms.loadGenerator),
      machine,
    },
  };
}

const f3 = (n: number) => n.toFixed(3);
const f2 = (n: number) => n.toFixed(2);
const rate = (n: number) => Math.round(n).toLocaleString('en-US');

function line(r: Run): string {
  return (
    `${r.webs} web + 1 worker, run ${r.run}: ${rate(r.acceptedPerSecond)} accepted/s ` +
    `(${r.perWeb.map((w) => rate(w.acceptedPerSecond)).join(' + ')}), non-200 ${formatStatusCounts(r.non200)}, ` +
    `worker ${rate(r.repliesPerSecond)} finished/s; CPU ms/req web ${r.cpuMsPerRequest.webs.map(f3).join(', ')}, ` +
    `worker ${f3(r.cpuMsPerRequest.worker)}, PostgreSQL ${f3(r.cpuMsPerRequest.postgresAll)}, redis ${f3(r.cpuMsPerRequest.redis)}, ` +
    `load ${f3(r.cpuMsPerRequest.loadGenerator)}; cores used ${f2(r.cores.sum)} (machine ${r.cores.machine === undefined ? '?' : f2(r.cores.machine)})`
  );
}

function markdown(results: Run[], loadBefore: number[]): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const header = [
    'web processes',
    'run',
    'accepted/s',
    'p99 ms (worst port)',
    'worker finished/s',
    'web CPU ms/req (all webs)',
    'worker ms/req',
    'PostgreSQL ms/req (backends / all)',
    'Redis ms/req',
    'load generator ms/req',
    'cores used: webs + worker + PG + Redis + load = sum (machine)',
  ];
  return [
    `Scale-out, ${cpus().length} cores, load average at the start ${loadBefore.map((n) => n.toFixed(2)).join(' ')}; ` +
      `${connections} connections in all, ${seconds} s per run, one channel, REDIS_URL set, one ROLE=worker (echo provider):`,
    '',
    row(header),
    row(header.map(() => '---')),
    ...results.map((r) =>
      row([
        String(r.webs),
        String(r.run),
        rate(r.acceptedPerSecond),
        Math.max(...r.perWeb.map((w) => w.p99)).toFixed(1),
        rate(r.repliesPerSecond),
        f3(r.cpuMsPerRequest.websTotal),
        f3(r.cpuMsPerRequest.worker),
        `${f3(r.cpuMsPerRequest.postgresBackends)} / ${f3(r.cpuMsPerRequest.postgresAll)}`,
        f3(r.cpuMsPerRequest.redis),
        f3(r.cpuMsPerRequest.loadGenerator),
        `${f2(r.cores.webs)} + ${f2(r.cores.worker)} + ${f2(r.cores.postgres)} + ${f2(r.cores.redis)} + ` +
          `${f2(r.cores.loadGenerator)} = ${f2(r.cores.sum)} (${r.cores.machine === undefined ? '?' : f2(r.cores.machine)})`,
      ]),
    ),
  ].join('\n');
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
