/**
 * Trials beside live traffic, measured on PostgreSQL (a scratch database, dropped at the end; the
 * server runs from the sources as a child process with ROLE=all, its AI a fake model that takes
 * --delay ms per reply):
 *
 *   1. Live webhooks at --rate per second for --seconds, no trial: each live event's time from
 *      its 200 to `replied` (completed_at), p50 and p99.
 *   2. The same load while a trial asks a changed template on the channel's last --events
 *      events: the trial's time (created_at to finished_at), and the live events' 200 → replied
 *      p50 and p99 against part 1.
 *
 *   npx tsx bench/trial-bench.ts [--events=100] [--rate=50] [--seconds=20] [--slots=8] [--delay=200]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { startWithFakeAi } from './lib/hookprompt.js';
import { summariseLatencies, type LatencySummary } from './lib/latency.js';
import { runOpenLoop } from './lib/open-loop.js';
import { orderPayload, orderTemplate } from './lib/payload.js';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: '100' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
    slots: { type: 'string', default: '8' },
    delay: { type: 'string', default: '200' },
  },
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const events = Number(flags.events);
const rate = Number(flags.rate);
const seconds = Number(flags.seconds);
const slots = Number(flags.slots);
const aiDelayMs = Number(flags.delay);
const entry = { nodeArgs: ['--import', 'tsx', 'src/main.ts'] };
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

console.log(
  `# trial benchmark — ${new Date().toISOString()}, ${cpus().length} CPUs, load ${load()}\n` +
    `${events}-event trial, fake model ${aiDelayMs} ms, ${slots} worker slots, live ${rate}/s for ${seconds} s`,
);

const database = await createScratchDatabase(adminUrl, 'trial');
const { server, apiKey, webhookUrl, ai } = await startWithFakeAi(
  {
    name: 'trial',
    entry,
    databaseUrl: database.url,
    logFile: join('/tmp', 'hookprompt-trial-bench.log'),
  },
  aiDelayMs,
  slots,
).catch(async (error: unknown) => {
  await database.drop();
  throw error;
});
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.origin}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
};

try {
  const channelId = (
    await runSql<{ id: string }>(database.url, 'select max(id) as id from channels')
  )[0]?.id as string;
  // The trial's events: real ones, answered before the runs.
  await runOpenLoop(webhookUrl, orderPayload, { rate, seconds: Math.ceil(events / rate) });
  await untilAllAnswered();

  const without = await liveRun();
  console.log(`\n## 1. live only\n200 → replied: ${format(without)}`);

  await delay(2_000);
  const trial = await api('POST', `/channels/${channelId}/trials`, {
    template: `${orderTemplate} Answer in one sentence.`,
    events: { last: events },
  });
  const withTrial = await liveRun();
  const finished = await untilTrialDone(String(trial.id));
  const trialSeconds =
    (Date.parse(String(finished.finished_at)) - Date.parse(String(finished.created_at))) / 1000;
  console.log(
    `\n## 2. live with a ${String(finished.total)}-event trial\n` +
      `trial: ${trialSeconds.toFixed(1)} s (${String(finished.done)} asked)\n` +
      `200 → replied: ${format(withTrial)}\n` +
      `p99 with / without: ${(withTrial.p99 / without.p99).toFixed(2)}×; load ${load()}; AI calls ${ai.calls()}`,
  );
} finally {
  await server.stop();
  await ai.close();
  await database.drop();
}

/** One open-loop run of live webhooks; each event's 200 → replied time. */
async function liveRun(): Promise<LatencySummary> {
  const accepted = new Map<string, number>();
  await runOpenLoop(webhookUrl, orderPayload, {
    rate,
    seconds,
    onAccepted: (eventId, answeredAt) => accepted.set(eventId, answeredAt),
  });
  await untilAllAnswered();
  const rows = await runSql<{ id: string; completed: string }>(
    database.url,
    `select id, (extract(epoch from completed_at) * 1000)::float8 as completed from events
     where id = any ($1::bigint[]) and status = 'replied'`,
    [[...accepted.keys()]],
  );
  return summariseLatencies(
    rows.map((row) => Number(row.completed) - (accepted.get(String(row.id)) ?? 0)),
  );
}

async function untilAllAnswered(): Promise<void> {
  for (;;) {
    const [row] = await runSql<{ n: string }>(
      database.url,
      `select count(*) as n from events where status in ('pending', 'processing')`,
    );
    if (Number(row?.n) === 0) return;
    await delay(200);
  }
}

async function untilTrialDone(id: string): Promise<Record<string, unknown>> {
  for (;;) {
    const trial = await api('GET', `/trials/${id}`);
    if (trial.status !== 'running') return trial;
    await delay(200);
  }
}

function format(latency: LatencySummary): string {
  return `${latency.count} events, p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms, max ${latency.max.toFixed(0)} ms`;
}
