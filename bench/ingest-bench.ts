/**
 * Ingest benchmark, and every performance goal in one table at the end. How many webhooks per
 * second the receiver accepts (answers 200 after the event is committed), at what latency,
 * against baselines on the same PostgreSQL:
 *   (a)   Express + express.json() + one INSERT committed per request (pg Pool of 10)
 *   (a+q) (a) plus the quota as one hot counter row updated in the same transaction
 *   (b)   the Express handler of (a) without the database
 *   (c)   a node:http hello world
 * Every server runs as a child process; the load comes from this one. Each run gets scratch
 * databases, dropped at the end. Results go to bench/results/ingest-<time>.json and are printed
 * as markdown, ending with the table of performance goals (figure | measured | goal | met).
 *
 *   npm run bench                      everything below; about 23 minutes on the 2-core VM,
 *                                      14 of them to fill the 10,000,000-event database (with
 *                                      --scale-keep, once: later runs take about 8 minutes)
 *   npm run bench -- --quick           3 s runs, 3 s of end-to-end events, 100,000 events
 *   npm run bench -- --profile         also CPU profiles of the receiver at 128 connections (plain,
 *                                      and signed when selected)
 *
 * What it runs, in order:
 *   1. (c), (b), (a+q): closed loop at 32 and 128 connections (10 s each), fixed rate 500/s;
 *   2. --rounds (4) interleaved rounds of (a), ours, and ours on a channel with
 *      standard-webhooks verification and automatic duplicate detection (ours-signed), at 128
 *      connections (the first round also at 32, and (a) at 500/s), ours measured at 500/s
 *      evenly paced --fixed-runs (3) times over the rounds (with the server's full garbage
 *      collections and its batch writes over 50 ms during each run, from its /metrics, and the
 *      CPU per request of the server and its database and the machine's busy cores); ours
 *      and ours-signed swap places every other round. The 500/s requests come from a process
 *      of their own (lib/open-loop-apart.ts). With --accept-when, a third server takes its
 *      turns beside them: ours on a channel whose `accept_when` holds for the bench payload
 *      (ours-accept), so every event is stored as usual and the ratio is what the filter costs;
 *   3. ours with LOG_LEVEL=info;
 *   4. end to end with the worker (ROLE=all) and a fake AI answering in 200 ms, once per
 *      WORKER_CONCURRENCY (8, 32, 128): events posted at 1.5 × its capacity (concurrency ÷
 *      0.2 s) for --e2e-seconds (10), so a backlog forms; the rate of replies is the capacity;
 *   5. a database holding --scale-events events (10,000,000; bench/lib/events-fill.ts) and one
 *      holding none: Brain Logs first pages through the API, and ingest at 128 connections on
 *      each, alternating (bench/lib/scale-events.ts).
 *
 * Options: --duration=<s> (or BENCH_DURATION), --warmup=<s> (each server's warm-up at 32
 * connections before it is measured; 2, 1 with --quick),
 * --only=ours,ours-signed,a,a+q,b,c,e2e,scale, --tsx (run the sources instead of the build),
 * --no-build (use dist/ as it is),
 * --entry=<main.js> (measure another build of hookprompt, e.g. a candidate change built
 * elsewhere), --rounds=<n>, --fixed-runs=<n>, --skip-e2e, --e2e-concurrency=<n,n,…>,
 * --e2e-seconds=<s>, --e2e-rate=<n/s> and --e2e-events=<n> (the same for every concurrency),
 * --e2e-ai=openai|anthropic (the API the fake AI speaks, and so the provider used; openai),
 * --accept-when (ours-accept in the rounds of part 2, above),
 * --fairness (also how long a workspace's single event waits next to another's backlog of
 * 2,000), --scale-events=<n> (0 skips part 5), --scale-keep (keep the filled database,
 * hookprompt_bench_events_<n>, 14.5 GiB at 10,000,000, and reuse it in later runs with
 * --scale-keep while the migrations are the same: part 5 then takes about a minute).
 * `--only=ours` runs ours, its end to end and the large table; `--only=e2e` the end to end
 * only. BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Condition } from '../src/conditions/condition-schemas.js';
import { compileConditions } from '../src/conditions/conditions.js';
import { parsePayload } from '../src/template/index.js';
import { BASELINE_SCHEMA } from './baselines/baseline-schema.js';
import { BenchRun } from './lib/bench-run.js';
import { build } from './lib/build.js';
import { formatProfileSummary, readCpuProfile, summariseProfile } from './lib/cpu-profile.js';
import { runEndToEnd, type EndToEndResult } from './lib/end-to-end.js';
import type { FakeAiProtocol } from './lib/fake-ai-server.js';
import { runFairness, type FairnessResult } from './lib/fairness.js';
import { figuresMarkdown } from './lib/issue-figures.js';
import { totalOf } from './lib/latency.js';
import { runOpenLoopApart } from './lib/open-loop-apart.js';
import { cpuSnapshot, cpuUse } from './lib/process-cpu.js';
import { histogramBetween, metricSamples } from './lib/server-metrics.js';
import { orderPayload } from './lib/payload.js';
import {
  closedLoopLine,
  markdownReport,
  openLoopLine,
  type BenchReport,
  type OpenLoopRow,
} from './lib/report.js';
import type { ClosedLoopRow } from './lib/closed-loop.js';
import { runScaleEvents } from './lib/scale-events.js';
import { runSql } from './lib/scratch-database.js';
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
    warmup: { type: 'string' },
    only: { type: 'string' },
    tsx: { type: 'boolean', default: false },
    entry: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '4' },
    'fixed-runs': { type: 'string', default: '3' },
    'skip-e2e': { type: 'boolean', default: false },
    'e2e-concurrency': { type: 'string', default: '8,32,128' },
    'e2e-seconds': { type: 'string' },
    'e2e-events': { type: 'string' },
    'e2e-rate': { type: 'string' },
    'e2e-ai': { type: 'string', default: 'openai' },
    'accept-when': { type: 'boolean', default: false },
    fairness: { type: 'boolean', default: false },
    'scale-events': { type: 'string' },
    'scale-keep': { type: 'boolean', default: false },
  },
});

const seconds = Number(flags.duration ?? process.env.BENCH_DURATION ?? (flags.quick ? 3 : 10));
const warmupSeconds = Number(flags.warmup ?? (flags.quick ? 1 : 2));
const connectionCounts = [32, 128];
const fixedRate = 500;
const rounds = Number(flags.rounds);
const fixedRuns = Number(flags['fixed-runs']);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = flags.only ? new Set(flags.only.split(',')) : undefined;
const aiDelayMs = 200;
const e2eConcurrencies = flags['e2e-concurrency'].split(',').map(Number);
const e2eSeconds = Number(flags['e2e-seconds'] ?? (flags.quick ? 3 : 10));
const scaleEvents = Number(flags['scale-events'] ?? (flags.quick ? 100_000 : 10_000_000));
const positive = [seconds, rounds, e2eSeconds, ...e2eConcurrencies];
if (!positive.every((n) => n > 0) || !(fixedRuns >= 0))
  throw new Error('durations, rounds, runs and concurrencies must be positive');
if (!(scaleEvents >= 0)) throw new Error('--scale-events must be 0 or more');
const e2eAi = flags['e2e-ai'] as FakeAiProtocol;
if (e2eAi !== 'openai' && e2eAi !== 'anthropic') {
  throw new Error('--e2e-ai must be openai or anthropic');
}

const resultsDir = join(projectRoot, 'bench', 'results');
const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '-');
mkdirSync(join(resultsDir, 'logs'), { recursive: true });
const run = new BenchRun({
  adminUrl,
  seconds,
  warmupSeconds,
  logsDir: join(resultsDir, 'logs'),
  stamp,
});

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
  channel?: Record<string, unknown>,
) => hookpromptTarget(key, label, hookpromptEntry, env, nodeFlags, sender, channel);

process.once('SIGINT', () => {
  console.error('\ninterrupted: stopping servers and dropping scratch databases');
  void run.cleanUp().finally(() => process.exit(130));
});

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  console.log(
    `load average at the start: ${loadBefore.map((n) => n.toFixed(2)).join(' ')} (${cpus().length} cores)`,
  );
  const buildErrors = flags.tsx || flags.entry || flags['no-build'] ? false : build();

  const [{ version: postgres } = { version: '?' }] = await runSql<{ version: string }>(
    adminUrl,
    `select split_part(version(), ' ', 1) || ' ' || split_part(version(), ' ', 2) as version`,
  );
  const db = await run.scratch('ingest');
  await runSql(db.url, BASELINE_SCHEMA);

  const closedLoop: ClosedLoopRow[] = [];
  const openLoop: OpenLoopRow[] = [];
  const selected = (key: string) => !only || only.has(key);
  const [baselineA] = baselines.filter((t) => t.key === 'a');
  const plain = ours('ours', 'ours (LOG_LEVEL=warn)');

  /**
   * One server session of each of `targets`, all started together: closed loop at each of
   * `connections` (the targets taking turns when there are several), then each target's fixed-rate
   * runs (the number with it), alone on the machine: targets without any stop first.
   */
  const session = async (targets: [Target, number][], round: number, connections: number[]) => {
    // A server's stop() may be called again once it has stopped.
    const started: {
      target: Target;
      fixed: number;
      running: RunningTarget;
      stop(): Promise<void>;
    }[] = [];
    try {
      for (const [target, fixed] of targets) {
        const { stop, ...running } = await run.start(target, db);
        started.push({ target, fixed, running, stop });
      }
      for (const c of connections) {
        const [alone] = started.length === 1 ? started : [];
        const rows = alone
          ? [await run.closedLoop(alone.target, alone.running, db, c)]
          : await run.closedLoopsTakingTurns(started, db, c);
        for (const row of rows) {
          console.log(closedLoopLine({ ...row, round }));
          closedLoop.push({ ...row, round });
        }
      }
      for (const entry of started) if (entry.fixed === 0) await entry.stop();
      for (const { target, fixed, running } of started) {
        for (let i = 0; i < fixed; i++) {
          await run.checkpoint();
          const before = await serverMetrics(target, running);
          const cpuBefore = cpuSnapshot(running.server.pid, db.name);
          const result = await runOpenLoopApart(running.url, orderPayload, {
            rate: fixedRate,
            seconds,
          });
          const { serverMsPerRequest, postgresMsPerRequest, machineCores } = cpuUse(
            cpuBefore,
            cpuSnapshot(running.server.pid, db.name),
            result.latency.count + totalOf(result.non200),
          );
          const after = await serverMetrics(target, running);
          const row = {
            key: target.key,
            target: target.label,
            round,
            ...result,
            ...(before && after ? serverSideOf(before, after) : {}),
            cpu: { serverMsPerRequest, postgresMsPerRequest, machineCores },
          };
          console.log(openLoopLine(row));
          openLoop.push(row);
        }
      }
    } finally {
      for (const entry of started) await entry.stop();
    }
  };

  for (const target of baselines.filter((t) => t.key !== 'a' && selected(t.key)))
    await session([[target, 1]], 1, connectionCounts);

  // What sender checks cost: every request verified and given a dedup key, on the same
  // payload, measured like the plain channel.
  const signed = ours(
    'ours-signed',
    'ours (standard-webhooks + dedup)',
    {},
    [],
    standardWebhooksSender(orderPayload),
  );
  // Conditions a shop's channel might have, all holding for the bench payload: every event
  // passes the filter and is stored as on the plain channel (a filtered event is answered 200
  // too, so that is checked here, not by the answers).
  const acceptWhen: Condition[] = [
    { path: 'payload.event', op: 'eq', value: 'order.created' },
    { path: 'payload.order.total', op: 'gt', value: 0 },
    { path: 'payload.order.status', op: 'in', value: ['paid', 'shipped'] },
  ];
  const failing = compileConditions(acceptWhen)?.failing({ payload: parsePayload(orderPayload) });
  if (failing) throw new Error(`accept_when does not hold for the bench payload: ${failing}`);
  const accepting = ours('ours-accept', 'ours (accept_when, 3 conditions)', {}, [], undefined, {
    accept_when: acceptWhen,
  });
  // (a), ours and the signed channel take turns, so that each ratio compares runs made side by
  // side, and is a mean over the rounds: single runs on a shared machine swing by a tenth. Ours
  // and the signed channel run at the same time, and take turns in short slices (see
  // closedLoopsTakingTurns): their ratio is the one figure here that compares two versions of
  // one server, and runs one after the other gave rounds from 0.72 to 0.98.
  for (let round = 1; round <= rounds; round++) {
    const first = round === 1;
    if (baselineA && selected('a'))
      await session([[baselineA, first ? 1 : 0]], round, first ? connectionCounts : [128]);
    const fixed =
      Math.floor((fixedRuns * round) / rounds) - Math.floor((fixedRuns * (round - 1)) / rounds);
    const pair: [Target, number][] = [];
    if (selected('ours')) pair.push([plain, fixed]);
    if (selected('ours-signed')) pair.push([signed, 0]);
    if (flags['accept-when']) pair.push([accepting, 0]);
    // Every other round the signed channel goes first, so that a machine drifting during the
    // run favours neither.
    if (round % 2 === 0) pair.reverse();
    if (pair.length > 0) await session(pair, round, first ? connectionCounts : [128]);
  }

  if (selected('ours')) {
    // One line per request is what LOG_LEVEL=info costs; measured once, at the higher concurrency.
    await session(
      [[ours('ours-info', 'ours (LOG_LEVEL=info)', { LOG_LEVEL: 'info' }), 0]],
      1,
      [128],
    );
  }

  const profiles: BenchReport['profiles'] = [];
  if (flags.profile) {
    // The plain channel, and the signed one when selected: what verification and dedup add.
    const profiled = [{ key: 'ours', label: 'ours', sender: undefined as BenchSender | undefined }];
    if (selected('ours-signed'))
      profiled.push({
        key: 'ours-signed',
        label: 'ours (standard-webhooks + dedup)',
        sender: standardWebhooksSender(orderPayload),
      });
    for (const { key, label, sender } of profiled) {
      const name = `ingest-${stamp}-${key}.cpuprofile`;
      const target = ours(
        `${key}-profile`,
        `${label} (--cpu-prof)`,
        {},
        ['--cpu-prof', '--cpu-prof-dir', resultsDir, '--cpu-prof-name', name],
        sender,
      );
      await run.withTarget(target, db, async (running: RunningTarget) => {
        const row = { ...(await run.closedLoop(target, running, db, 128)), round: 1 };
        console.log(closedLoopLine(row));
        closedLoop.push(row);
      });
      const file = join(resultsDir, name);
      const profile = { target: label, file, ...summariseProfile(readCpuProfile(file)) };
      profiles.push(profile);
      console.log(
        `\nCPU profile of ${label} at 128 connections: ${file}\n${formatProfileSummary(profile)}\n`,
      );
    }
  }

  let endToEnd: BenchReport['endToEnd'];
  if (flags['skip-e2e'] || (only && !only.has('ours') && !only.has('e2e'))) {
    endToEnd = { skipped: 'not selected' };
  } else {
    endToEnd = [];
    for (const workerConcurrency of e2eConcurrencies)
      endToEnd.push(await endToEndRun(workerConcurrency));
  }

  let fairness: FairnessResult | undefined;
  if (flags.fairness) {
    const fairDb = await run.scratch('fairness');
    fairness = await runFairness(
      {
        name: 'ours (ROLE=all, fairness)',
        entry: { nodeArgs: hookpromptEntry },
        databaseUrl: fairDb.url,
        logFile: run.logFile('fairness'),
      },
      {
        backlog: 2000,
        aiDelayMs,
        workerConcurrency:
          flags['e2e-concurrency'] === '8,32,128' ? 64 : (e2eConcurrencies[0] as number),
      },
    );
    console.log(
      `fairness: a workspace's one event replied ${fairness.loneEventMs.toFixed(0)} ms after it arrived ` +
        `(bound ${fairness.boundMs} ms) while another workspace had ${fairness.backlogLeft} of ` +
        `${fairness.backlog} events left, WORKER_CONCURRENCY=${fairness.workerConcurrency}`,
    );
  }

  let scale: BenchReport['scaleEvents'];
  if (scaleEvents === 0 || (only && !only.has('ours') && !only.has('scale'))) {
    scale = { skipped: scaleEvents === 0 ? '--scale-events=0' : 'not selected' };
  } else {
    scale = await runScaleEvents(run, {
      events: scaleEvents,
      rounds,
      keep: flags['scale-keep'],
      target: (key, label) => ours(key, label),
    });
  }

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
      rounds,
      fixedRuns,
      payloadBytes: Buffer.byteLength(orderPayload),
      hookpromptEntry: `node ${hookpromptEntry.join(' ')}`,
      buildErrors,
      rateLimitStore: 'memory (no REDIS_URL)',
      scaleEvents,
    },
    closedLoop,
    ratios: ratiosOf(closedLoop),
    openLoop,
    endToEnd,
    fairness,
    scaleEvents: scale,
    profiles,
  };
  const jsonFile = join(resultsDir, `ingest-${stamp}.json`);
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `\nload average at the end: ${report.machine.loadAfter.map((n) => n.toFixed(2)).join(' ')}`,
  );
  console.log(`results: ${jsonFile}\n\n${markdownReport(report)}\n\n${figuresMarkdown(report)}`);
}

/**
 * The whole path at one WORKER_CONCURRENCY: events posted faster than the worker can answer
 * (1.5 × concurrency ÷ AI latency, unless --e2e-rate says otherwise), so that the rate of
 * replies is the worker's capacity.
 */
async function endToEndRun(workerConcurrency: number): Promise<EndToEndResult> {
  const rate = Number(flags['e2e-rate'] ?? (1.5 * workerConcurrency * 1000) / aiDelayMs);
  const events = Number(flags['e2e-events'] ?? Math.round(rate * e2eSeconds));
  const e2eDb = await run.scratch(`e2e${workerConcurrency}`);
  await run.checkpoint();
  const result = await runEndToEnd(
    {
      name: `ours (ROLE=all, AI_PROVIDER=${e2eAi}, WORKER_CONCURRENCY=${workerConcurrency})`,
      entry: { nodeArgs: hookpromptEntry },
      databaseUrl: e2eDb.url,
      logFile: run.logFile(`e2e-${workerConcurrency}`),
    },
    { events, rate, aiDelayMs, aiProtocol: e2eAi, workerConcurrency, stallMs: 30_000 },
  );
  await e2eDb.drop();
  console.log(
    `end to end, AI_PROVIDER=${e2eAi}, WORKER_CONCURRENCY=${workerConcurrency}: ${result.accepted} of ${events} accepted at ${rate}/s, ` +
      `statuses ${JSON.stringify(result.statuses)}, ${result.completedPerSecond.toFixed(0)} replies/s ` +
      `(capacity ${((workerConcurrency * 1000) / aiDelayMs).toFixed(0)}/s), 200→replied p50 ` +
      `${result.answerToReplied.p50.toFixed(0)} ms p99 ${result.answerToReplied.p99.toFixed(0)} ms` +
      `${result.stalled ? ' — STALLED: is the worker running?' : ''}`,
  );
  return result;
}

/** hookprompt's server's metrics (its `/metrics`); undefined for the baselines. */
async function serverMetrics(
  target: Target,
  running: RunningTarget,
): Promise<Map<string, number> | undefined> {
  return target.key.startsWith('ours') ? metricSamples(running.url) : undefined;
}

/**
 * What the server saw during a run, from its metrics before and after: its full garbage
 * collections (V8 mark-compacts, prom-client's `nodejs_gc_duration_seconds`), and its batch
 * writes slower than 50 ms (`hookprompt_event_batch_write_seconds`), the database's share of a
 * latency tail.
 */
function serverSideOf(
  before: Map<string, number>,
  after: Map<string, number>,
): Pick<OpenLoopRow, 'fullGcs' | 'slowWrites'> {
  const major = 'nodejs_gc_duration_seconds_count{kind="major"}';
  // No series until the server's first full collection.
  const fullGcs = (after.get(major) ?? 0) - (before.get(major) ?? 0);
  const writes = histogramBetween(before, after, 'hookprompt_event_batch_write_seconds', 0.05);
  return { fullGcs, slowWrites: { over50ms: writes.slower, slowestWithinS: writes.slowestWithin } };
}

/** Ratios of the mean accepted/s at 128 connections (the goals' figures: lib/issue-figures.ts). */
function ratiosOf(rows: ClosedLoopRow[]): BenchReport['ratios'] {
  const at128 = (key: string) => {
    const runs = rows.filter((r) => r.key === key && r.connections === 128);
    return runs.length
      ? runs.reduce((sum, r) => sum + r.acceptedPerSecond, 0) / runs.length
      : undefined;
  };
  const plain = at128('ours');
  if (plain === undefined) return [];
  const ratios: BenchReport['ratios'] = [];
  const add = (name: string, value: number | undefined) => {
    if (value !== undefined) ratios.push({ name, value });
  };
  const over = (other: number | undefined) => (other === undefined ? undefined : plain / other);
  const under = (other: number | undefined) => (other === undefined ? undefined : other / plain);
  add('ours / (a)', over(at128('a')));
  add('ours / (a+q)', over(at128('a+q')));
  add('ours / (b)', over(at128('b')));
  add('ours signed + dedup / ours', under(at128('ours-signed')));
  add('ours accept_when / ours', under(at128('ours-accept')));
  add('ours LOG_LEVEL=info / warn', under(at128('ours-info')));
  return ratios;
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => run.cleanUp());
