/**
 * What a channel's `accept_when` costs the receiver on large payloads: 840 KB orders posted to a
 * channel whose `accept_when` has 20 conditions (over six distinct paths, two of them the large
 * order and its items, read whole by `contains`) and to a plain channel of the same server,
 * taking turns, each a closed loop of --connections senders for --seconds. Meanwhile `/healthz`
 * is asked every 20 ms, one request at a time: its latency is the event loop's stalls. Every
 * payload meets the conditions, so every condition is checked and every event stored as on the
 * plain channel; with --filtered a third case posts payloads the first condition refuses.
 * Payloads are compact JSON, whose large objects render as their received text
 * (src/template/exact-text.ts); --indent=<n> writes them indented, so that each distinct path
 * read whole is rendered from the tree, once.
 * Goal: the filter's rate ≥ 0.9 × the plain channel's, and `/healthz` p99 ≤ 50 ms on both.
 *
 * Run with `npx tsx bench/accept-when-bench.ts` (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, names the server; a scratch database is used and
 * dropped). --seconds=<s> (30), --connections=<n> (8), --rounds=<n> (1), --filtered,
 * --indent=<n> (0), --entry=<main.js> (another build; default the sources through tsx),
 * --profile=<dir> (the server runs with `--cpu-prof` into <dir>; its main thread's summary is
 * printed).
 */
import { tmpdir } from 'node:os';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoopSamples, summariseClosedLoop } from './lib/closed-loop.js';
import { formatProfileSummary, readCpuProfile, summariseProfile } from './lib/cpu-profile.js';
import { startHookprompt } from './lib/hookprompt.js';
import { ACCEPT_WHEN, orderPayload } from './lib/order-payload.js';
import { summariseLatencies, type LatencySummary } from './lib/latency.js';
import { cpuSnapshot, cpuUse, type CpuUse } from './lib/process-cpu.js';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '1' },
    filtered: { type: 'boolean', default: false },
    indent: { type: 'string', default: '0' },
    entry: { type: 'string' },
    profile: { type: 'string' },
  },
});
const SECONDS = Number(options.seconds);
const CONNECTIONS = Number(options.connections);
const ROUNDS = Number(options.rounds);
const INDENT = Number(options.indent);
const PAYLOAD_BYTES = 840 * 1024;
const HEALTH_EVERY_MS = 20;
const PROFILE = options.profile === undefined ? undefined : resolve(options.profile);

interface CaseResult {
  name: string;
  acceptedPerSecond: number;
  webhook: LatencySummary;
  non200: Record<string, number>;
  health: LatencySummary;
  cpu: CpuUse;
}

/** Asks `/healthz` one request at a time, every HEALTH_EVERY_MS, until `stop` is called. */
function probeHealth(origin: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      const rest = HEALTH_EVERY_MS - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

async function runCase(
  name: string,
  url: string,
  body: string,
  server: { origin: string; pid: number },
  database: string,
): Promise<CaseResult> {
  const before = cpuSnapshot(server.pid, database);
  const health = probeHealth(server.origin);
  const samples = await closedLoopSamples(url, body, CONNECTIONS, SECONDS);
  const healthLatencies = await health.stop();
  const after = cpuSnapshot(server.pid, database);
  const result = summariseClosedLoop([samples]);
  return {
    name,
    acceptedPerSecond: result.acceptedPerSecond,
    webhook: result.latency,
    non200: result.non200,
    health: summariseLatencies(healthLatencies),
    cpu: cpuUse(before, after, samples.latencies.length),
  };
}

const ms = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  const accepted = orderPayload('order.created', PAYLOAD_BYTES, INDENT);
  const refused = orderPayload('order.test', PAYLOAD_BYTES, INDENT);
  if (PROFILE) mkdirSync(PROFILE, { recursive: true });
  const database = await createScratchDatabase(ADMIN_URL, 'accept_when');
  const running = await startHookprompt({
    name: 'accept-when',
    entry: { nodeArgs: options.entry ? [options.entry] : ['--import', 'tsx', 'src/main.ts'] },
    nodeFlags: PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : [],
    databaseUrl: database.url,
    logFile: join(tmpdir(), 'hookprompt-bench-accept-when.log'),
  });
  const { server, apiKey, webhookUrl: plainUrl } = running;
  try {
    const res = await fetch(`${server.origin}/api/v1/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'bench accept_when',
        template: '{{type}}',
        accept_when: ACCEPT_WHEN,
      }),
    });
    if (!res.ok) throw new Error(`creating the channel: ${res.status} ${await res.text()}`);
    const channel = (await res.json()) as { webhook_url: string };
    const filteredUrl = `${server.origin}${new URL(channel.webhook_url).pathname}`;
    const cases: [string, string, string][] = [
      ['plain', plainUrl, accepted],
      ['accept_when (20 conditions, all hold)', filteredUrl, accepted],
      ...(options.filtered
        ? [
            ['accept_when (the first refuses: filtered)', filteredUrl, refused] as [
              string,
              string,
              string,
            ],
          ]
        : []),
    ];

    console.log(
      `payload ${Buffer.byteLength(accepted)} bytes, ${ACCEPT_WHEN.length} conditions, ` +
        `${CONNECTIONS} connections, ${SECONDS} s a case, ${ROUNDS} round(s)`,
    );
    // Warm-up: the server's code paths and the payloads' first parse.
    for (const [, url, body] of cases) await closedLoopSamples(url, body, 2, 2);
    const results: CaseResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, url, body] of cases) {
        // Each case starts on an empty table: what the last one stored is not this one's cost.
        await runSql(database.url, 'delete from events');
        await runSql(database.url, 'vacuum events');
        results.push(await runCase(name, url, body, server, database.name));
      }
    }

    console.log(
      '\n| case | accepted/s | webhook p50 / p99 ms | non-200 | /healthz p50 / p99 / max ms (n) ' +
        '| server / PostgreSQL CPU ms per request | server waited for a core | other cores busy |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const opt = (n: number | undefined, digits = 1) => (n === undefined ? '?' : n.toFixed(digits));
    for (const r of results) {
      console.log(
        `| ${r.name} | ${r.acceptedPerSecond.toFixed(1)} | ${ms(r.webhook.p50)} / ${ms(r.webhook.p99)} | ` +
          `${JSON.stringify(r.non200)} | ${ms(r.health.p50)} / ${ms(r.health.p99)} / ${ms(r.health.max)} (${r.health.count}) | ` +
          `${opt(r.cpu.serverMsPerRequest)} / ${opt(r.cpu.postgresMsPerRequest)} | ` +
          `${opt((r.cpu.serverWaitedForCore ?? NaN) * 100, 0)} % | ${opt(r.cpu.otherCores, 2)} |`,
      );
    }
    const rate = (name: string) =>
      results.filter((r) => r.name === name).reduce((sum, r) => sum + r.acceptedPerSecond, 0);
    const ratio = rate(cases[1]?.[0] as string) / rate('plain');
    const worstHealth = Math.max(...results.map((r) => r.health.p99));
    const met = ratio >= 0.9 && worstHealth <= 50;
    console.log(
      `\naccept_when ÷ plain: ${ratio.toFixed(2)} (goal ≥ 0.9); worst /healthz p99 ${ms(worstHealth)} ms ` +
        `(goal ≤ 50): ${met ? 'met' : 'not met'}`,
    );
    if (!met) process.exitCode = 1;
  } finally {
    await server.stop();
    await database.drop();
  }
  if (PROFILE) {
    // One profile a thread (tsx's loader has its own): the main thread's is the largest.
    const [file] = readdirSync(PROFILE)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(PROFILE, name))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (file) {
      const summary = summariseProfile(readCpuProfile(file), 25);
      console.log(`\nCPU profile of the server: ${file}\n${formatProfileSummary(summary)}`);
    }
  }
}

await main();
