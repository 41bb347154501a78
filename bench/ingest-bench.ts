/**
 * Ingest benchmark: how many webhooks per second the receiver accepts (answers 200 after the
 * event is committed), at what latency, against baselines on the same PostgreSQL:
 *   (a)   Express + express.json() + one INSERT committed per request (pg Pool of 10)
 *   (a+q) (a) plus the quota as one hot counter row updated in the same transaction
 *   (b)   the Express handler of (a) without the database
 *   (c)   a node:http hello world
 * Every server runs as a child process; the load comes from this one. Each run gets a scratch
 * database, dropped at the end. Results go to bench/results/ingest-<time>.json and are printed
 * as a markdown table.
 *
 *   npm run bench                      closed loop at 32 and 128 connections, 10 s each; fixed
 *                                      rate 500/s; end to end with the worker; and the receiver
 *                                      again on a channel with standard-webhooks verification
 *                                      and automatic duplicate detection (ours-signed)
 *   npm run bench -- --quick           3 s runs
 *   npm run bench -- --profile         also a CPU profile of the receiver at 128 connections
 *
 * Options: --duration=<s> (or BENCH_DURATION), --only=ours,ours-signed,a,a+q,b,c, --tsx (run the sources
 * instead of the build), --no-build (use dist/ as it is), --entry=<main.js> (measure another
 * build of hookprompt, e.g. a candidate change built elsewhere), --skip-e2e, --e2e-events=<n>,
 * --e2e-rate=<n/s>, --e2e-concurrency=<WORKER_CONCURRENCY>, --fairness (also measure how long a
 * workspace's single event waits next to another's backlog of 2,000; `--only=e2e` runs only the
 * end-to-end and fairness parts). BENCH_DATABASE_URL picks the server
 * (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BASELINE_SCHEMA } from './baselines/baseline-schema.js';
import { runClosedLoop } from './lib/closed-loop.js';
import { formatProfileSummary, readCpuProfile, summariseProfile } from './lib/cpu-profile.js';
import { runEndToEnd } from './lib/end-to-end.js';
import { runFairness, type FairnessResult } from './lib/fairness.js';
import { runOpenLoop } from './lib/open-loop.js';
import { orderPayload } from './lib/payload.js';
import { cpuSnapshot, cpuUse } from './lib/process-cpu.js';
import {
  closedLoopLine,
  markdownReport,
  openLoopLine,
  type BenchReport,
  type ClosedLoopRow,
  type OpenLoopRow,
} from './lib/report.js';
import { totalOf } from './lib/latency.js';
import { createScratchDatabase, runSql, type ScratchDatabase } from './lib/scratch-database.js';
import { projectRoot } from './lib/server-process.js';
import { standardWebhooksSender } from './lib/signed-sender.js';
import {
  baselines,
  hookpromptTarget,
  type BenchSender,
  type RunningTarget,
  type Target,
} from './lib/targets.js';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    only: { type: 'string' },
    tsx: { type: 'boolean', default: false },
    entry: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'skip-e2e': { type: 'boolean', default: false },
    'e2e-events': { type: 'string' },
    'e2e-rate': { type: 'string' },
    'e2e-concurrency': { type: 'string', default: '64' },
    fairness: { type: 'boolean', default: false },
  },
});

const seconds = Number(flags.duration ?? process.env.BENCH_DURATION ?? (flags.quick ? 3 : 10));
const warmupSeconds = flags.quick ? 1 : 2;
const connectionCounts = [32, 128];
const fixedRate = 500;
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = flags.only ? new Set(flags.only.split(',')) : undefined;
const e2eRate = Number(flags['e2e-rate'] ?? 200);
const e2eEvents = Number(flags['e2e-events'] ?? (flags.quick ? 3 * e2eRate : 2000));
if (!(seconds > 0) || !(e2eRate > 0) || !(e2eEvents > 0))
  throw new Error('durations, rates and counts must be positive');

const resultsDir = join(projectRoot, 'bench', 'results');
const logsDir = join(resultsDir, 'logs');
const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '-');
mkdirSync(logsDir, { recursive: true });
const logFile = (key: string) => join(logsDir, `${stamp}-${key.replace(/[^a-z0-9]+/gi, '-')}.log`);

const hookpromptEntry = flags.entry
  ? [flags.entry]
  : flags.tsx
    ? ['--import', 'tsx', 'src/main.ts']
    : ['dist/main.js'];
const ours = (
  key: string,
  label: string,
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
  sender?: BenchSender,
) => hookpromptTarget(key, label, hookpromptEntry, env, nodeFlags, sender);

const cleanups: (() => Promise<void>)[] = [];
process.once('SIGINT', () => {
  console.error('\ninterrupted: stopping servers and dropping scratch databases');
  void runCleanups().finally(() => process.exit(130));
});

async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse())
    await cleanup().catch((e: unknown) => console.error(e));
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  console.log(
    `load average before: ${loadBefore.map((n) => n.toFixed(2)).join(' ')} (${cpus().length} cores)`,
  );
  const buildErrors = flags.tsx || flags.entry || flags['no-build'] ? false : build();

  const [{ version: postgres } = { version: '?' }] = await runSql<{ version: string }>(
    adminUrl,
    `select split_part(version(), ' ', 1) || ' ' || split_part(version(), ' ', 2) as version`,
  );
  const db = await scratch('ingest');
  await runSql(db.url, BASELINE_SCHEMA);

  const closedLoop: ClosedLoopRow[] = [];
  const openLoop: OpenLoopRow[] = [];
  const selected = (target: Target) => !only || only.has(target.key);

  for (const target of [...baselines, ours('ours', 'ours (LOG_LEVEL=warn)')].filter(selected)) {
    await withTarget(target, db, async (running) => {
      for (const connections of connectionCounts) {
        await checkpoint();
        const row = await measureClosedLoop(target, running, db, connections);
        console.log(closedLoopLine(row));
        closedLoop.push(row);
      }
      await checkpoint();
      const row = {
        key: target.key,
        target: target.label,
        ...(await runOpenLoop(running.url, orderPayload, { rate: fixedRate, seconds })),
      };
      console.log(openLoopLine(row));
      openLoop.push(row);
    });
  }

  if (!only || only.has('ours-signed')) {
    // What sender checks cost: every request verified and given a dedup key, on the same
    // payload, measured like the plain channel above.
    const signed = ours(
      'ours-signed',
      'ours (standard-webhooks + dedup)',
      {},
      [],
      standardWebhooksSender(orderPayload),
    );
    await withTarget(signed, db, async (running) => {
      for (const connections of connectionCounts) {
        await checkpoint();
        const row = await measureClosedLoop(signed, running, db, connections);
        console.log(closedLoopLine(row));
        closedLoop.push(row);
      }
    });
  }

  if (!only || only.has('ours')) {
    // One line per request is what LOG_LEVEL=info costs; measured once, at the higher concurrency.
    const info = ours('ours-info', 'ours (LOG_LEVEL=info)', { LOG_LEVEL: 'info' });
    await withTarget(info, db, async (running) => {
      await checkpoint();
      const row = await measureClosedLoop(info, running, db, 128);
      console.log(closedLoopLine(row));
      closedLoop.push(row);
    });
  }

  let profile: BenchReport['profile'];
  if (flags.profile) {
    const name = `ingest-${stamp}.cpuprofile`;
    const profiled = ours('ours-profile', 'ours (--cpu-prof)', {}, [
      '--cpu-prof',
      '--cpu-prof-dir',
      resultsDir,
      '--cpu-prof-name',
      name,
    ]);
    await withTarget(profiled, db, async (running) => {
      console.log(closedLoopLine(await measureClosedLoop(profiled, running, db, 128)));
    });
    const file = join(resultsDir, name);
    profile = { file, ...summariseProfile(readCpuProfile(file)) };
    console.log(
      `\nCPU profile of the receiver at 128 connections: ${file}\n${formatProfileSummary(profile)}\n`,
    );
  }

  let endToEnd: BenchReport['endToEnd'];
  if (flags['skip-e2e'] || (only && !only.has('ours') && !only.has('e2e'))) {
    endToEnd = { skipped: 'not selected' };
  } else {
    const e2eDb = await scratch('e2e');
    const options = {
      events: e2eEvents,
      rate: e2eRate,
      aiDelayMs: 200,
      workerConcurrency: Number(flags['e2e-concurrency']),
      stallMs: 30_000,
    };
    endToEnd = await runEndToEnd(
      {
        name: 'ours (ROLE=all)',
        entry: { nodeArgs: hookpromptEntry },
        databaseUrl: e2eDb.url,
        logFile: logFile('e2e'),
      },
      options,
    );
    console.log(
      `end to end: ${endToEnd.accepted} accepted, statuses ${JSON.stringify(endToEnd.statuses)}, ` +
        `${endToEnd.repliedPerSecond.toFixed(0)} replied/s, 200→replied p50 ${endToEnd.answerToReplied.p50.toFixed(0)} ms ` +
        `p99 ${endToEnd.answerToReplied.p99.toFixed(0)} ms${endToEnd.stalled ? ' — STALLED: is the worker running?' : ''}`,
    );
  }

  let fairness: FairnessResult | undefined;
  if (flags.fairness) {
    const fairDb = await scratch('fairness');
    fairness = await runFairness(
      {
        name: 'ours (ROLE=all, fairness)',
        entry: { nodeArgs: hookpromptEntry },
        databaseUrl: fairDb.url,
        logFile: logFile('fairness'),
      },
      { backlog: 2000, aiDelayMs: 200, workerConcurrency: Number(flags['e2e-concurrency']) },
    );
    console.log(
      `fairness: a workspace's one event replied ${fairness.loneEventMs.toFixed(0)} ms after it arrived ` +
        `(bound ${fairness.boundMs} ms) while another workspace had ${fairness.backlogLeft} of ` +
        `${fairness.backlog} events left, WORKER_CONCURRENCY=${fairness.workerConcurrency}`,
    );
  }

  const ratios = ratiosOf(closedLoop);
  const report: BenchReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      node: process.versions.node,
      postgres,
      loadBefore,
      loadAfter: loadavg(),
    },
    settings: {
      seconds,
      warmupSeconds,
      connectionCounts,
      fixedRate,
      payloadBytes: Buffer.byteLength(orderPayload),
      hookpromptEntry: `node ${hookpromptEntry.join(' ')}`,
      buildErrors,
      rateLimitStore: 'memory (no REDIS_URL)',
    },
    closedLoop,
    ratios,
    openLoop,
    endToEnd,
    fairness,
    profile,
  };
  const jsonFile = join(resultsDir, `ingest-${stamp}.json`);
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `\nload average after: ${report.machine.loadAfter.map((n) => n.toFixed(2)).join(' ')}`,
  );
  console.log(`results: ${jsonFile}\n\n${markdownReport(report)}`);
}

/** Builds dist/ as `npm run build` does; true when tsc reported errors (it still emits). */
function build(): boolean {
  console.log('building (npm run build)...');
  const result = spawnSync('npm', ['run', '--silent', 'build'], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  if (result.status === 0) return false;
  if (!existsSync(join(projectRoot, 'dist', 'main.js'))) {
    throw new Error(
      `npm run build failed and left no dist/main.js:\n${result.stdout}${result.stderr}`,
    );
  }
  console.warn(
    `warning: tsc reported errors; measuring what it emitted anyway:\n${result.stdout.slice(0, 2000)}`,
  );
  return true;
}

async function scratch(label: string): Promise<ScratchDatabase> {
  const db = await createScratchDatabase(adminUrl, label);
  cleanups.push(() => db.drop());
  return db;
}

/** Starts the target, warms it up (JIT, pools, caches), runs `work`, and stops it. */
async function withTarget(
  target: Target,
  db: ScratchDatabase,
  work: (running: RunningTarget) => Promise<void>,
): Promise<void> {
  const running = await target.start(db.url, logFile(target.key));
  const stop = () => running.server.stop();
  cleanups.push(stop);
  try {
    await runClosedLoop(running.url, orderPayload, 32, warmupSeconds, running.headersFor);
    await work(running);
  } finally {
    cleanups.splice(cleanups.indexOf(stop), 1);
    await stop();
  }
}

/** One closed-loop run, with the CPU time the server and its PostgreSQL backends spent on it. */
async function measureClosedLoop(
  target: Target,
  running: RunningTarget,
  db: ScratchDatabase,
  connections: number,
): Promise<ClosedLoopRow> {
  const before = cpuSnapshot(running.server.pid, db.name);
  const result = await runClosedLoop(
    running.url,
    orderPayload,
    connections,
    seconds,
    running.headersFor,
  );
  const after = cpuSnapshot(running.server.pid, db.name);
  return {
    key: target.key,
    target: target.label,
    ...result,
    cpu: cpuUse(before, after, result.latency.count + totalOf(result.non200)),
  };
}

/** Flushes dirty pages now, so a checkpoint does not land in the middle of a measured run. */
async function checkpoint(): Promise<void> {
  await runSql(adminUrl, 'checkpoint');
}

function ratiosOf(rows: ClosedLoopRow[]): BenchReport['ratios'] {
  const at128 = (key: string) =>
    rows.find((r) => r.key === key && r.connections === 128)?.acceptedPerSecond;
  const ours = at128('ours');
  if (ours === undefined) return [];
  const ratios: BenchReport['ratios'] = [];
  const add = (name: string, other: number | undefined, target?: number) => {
    if (other !== undefined) ratios.push({ name, value: ours / other, target });
  };
  add('ours / (a)', at128('a'), 1.5);
  add('ours / (a+q)', at128('a+q'));
  add('ours / (b)', at128('b'), 0.7);
  const signed = at128('ours-signed');
  if (signed !== undefined)
    ratios.push({ name: 'ours signed + dedup / ours', value: signed / ours, target: 0.85 });
  const info = at128('ours-info');
  if (info !== undefined) ratios.push({ name: 'ours LOG_LEVEL=info / warn', value: info / ours });
  return ratios;
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => runCleanups());
