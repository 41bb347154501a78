/**
 * What checking the alerts costs the database each interval: 100 rules over a workspace of
 * 1,000 channels with a day of events (200,000, a few failed or rejected, some pending) and
 * their deliveries (to every channel's reply URL, and to the Slack destination of one in four). The rules mix the five conditions, channel-scoped and workspace-wide.
 * One evaluation is the whole transaction the evaluator runs (advisory lock, measuring every
 * rule, recording changes); reported as its wall time and the backend's CPU time (from /proc),
 * median and worst of the runs. Goal: at most 50 ms of database time per interval.
 *
 *   npx tsx bench/alerts-bench.ts [--runs=30]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres); it
 * must run on this machine (its backend's CPU time is read from /proc).
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { measureAlerts } from '../src/alerts/measure-alerts.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { createScratchDatabase, runSql } from './lib/scratch-database.js';

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '30' } } });
const runs = Number(flags.runs);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CHANNELS = 1000;
const EVENTS = 200_000;
const RULES = 100;

/** The rules: ten of each kind of condition, scoped to a channel or to the whole workspace. */
function ruleConditions(): object[] {
  const channel = (i: number) => String(1 + ((i * 97) % CHANNELS));
  const rules: object[] = [];
  for (let i = 0; rules.length < RULES; i++) {
    rules.push(
      {
        type: 'failure_rate',
        channel_id: channel(i),
        threshold: 0.5,
        window_s: 300,
        min_events: 1,
      },
      { type: 'failure_rate', threshold: 0.2, window_s: 900, min_events: 20 },
      { type: 'rejections', channel_id: channel(i), count: 5, window_s: 600 },
      { type: 'rejections', count: 50, window_s: 3600 },
      { type: 'delivery_failed', channel_id: channel(i) },
      { type: 'delivery_failed' },
      { type: 'queue_age', seconds: 300 },
      { type: 'budget', percent: 80 },
      {
        type: 'failure_rate',
        channel_id: channel(i + 500),
        threshold: 0.1,
        window_s: 3600,
        min_events: 5,
      },
      { type: 'delivery_failed', channel_id: channel(i + 500) },
    );
  }
  return rules.slice(0, RULES);
}

/** Fills the database on a connection of its own, without the service's statement timeout. */
async function fill(url: string): Promise<void> {
  const db = { query: (text: string, params: unknown[] = []) => runSql(url, text, params) };
  await db.query(
    `insert into workspaces (name, chat_quota, monthly_budget_usd, spent_usd)
     values ('Bench', 1000000, 100, 42)`,
  );
  await db.query(
    `insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
     select 1, 'Channel ' || n, '{{x}}', 'token-' || n, 'hash-' || n
     from generate_series(1, $1::int) n`,
    [CHANNELS],
  );
  // A day of events, newest last; 3% failed, 1% rejected, the last 50 still pending.
  await db.query(
    `insert into events (workspace_id, channel_id, received_at, status, payload, completed_at)
     select 1, 1 + (n * 7919) % $1, now() - ($2 - n) * interval '1 day' / $2,
            case when n > $2 - 50 then 'pending'
                 when n % 33 = 0 then 'failed' when n % 100 = 1 then 'rejected'
                 else 'replied' end,
            '{"x":1}', now()
     from generate_series(1, $2::int) n`,
    [CHANNELS, EVENTS],
  );
  // Every channel has a reply URL; one in four a Slack destination too.
  await db.query(
    `insert into destinations (channel_id, role, kind, url)
     select id, 'reply_url', 'webhook', 'https://example.com/replies' from channels`,
  );
  await db.query(
    `insert into destinations (channel_id, position, kind, conditions, message)
     select id, 0, 'slack', '[]', '{{reply}}' from channels where id % 4 = 0`,
  );
  // A reply delivery for half of the replied events, one in 50 failed; and a Slack message
  // for those of the channels with one, one in 40 failed.
  await db.query(
    `insert into deliveries (event_id, channel_id, webhook_id, type, state)
     select id, channel_id, 'msg_' || id, 'event.replied',
            case when id % 50 = 0 then 'failed' else 'delivered' end
     from events where status = 'replied' and id % 2 = 0`,
  );
  await db.query(
    `insert into deliveries (event_id, channel_id, webhook_id, type, state, destination_id)
     select e.id, e.channel_id, 'msg_slack_' || e.id, 'event.replied',
            case when e.id % 40 = 0 then 'failed' else 'delivered' end, d.id
     from events e join destinations d on d.channel_id = e.channel_id and d.role = 'destination'
     where e.status = 'replied' and e.id % 2 = 0`,
  );
  for (const [i, condition] of ruleConditions().entries())
    await db.query(
      `insert into alerts (workspace_id, name, condition, notify)
       values (1, $1, $2, '{"kind": "webhook", "url": "https://example.com/alerts"}')`,
      [`Rule ${i}`, JSON.stringify(condition)],
    );
  await db.query('analyze');
}

function backendCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const scratch = await createScratchDatabase(adminUrl, 'alerts');
// One connection, so the evaluations run on the backend whose CPU time is read.
const db = openPostgres({ url: scratch.url, max: 1 });
try {
  await migrate(db);
  await fill(scratch.url);
  const { rows } = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
  const pid = rows[0]!.pid;
  // The first runs record the rules' first changes and warm the caches.
  for (let i = 0; i < 3; i++) await measureAlerts(db);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const cpuBefore = backendCpuMs(pid);
    const start = performance.now();
    await measureAlerts(db);
    wall.push(performance.now() - start);
    cpu.push(backendCpuMs(pid) - cpuBefore);
  }
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)]!;
  const worst = (values: number[]) => sorted(values).at(-1)!;
  const { rows: firing } = await db.query<{ n: number }>(
    `select count(*)::int as n from alerts where state = 'firing'`,
  );
  console.log(
    `alerts evaluation, ${RULES} rules, ${CHANNELS} channels, ${EVENTS} events, ${runs} runs ` +
      `(${firing[0]!.n} firing):\n` +
      `  wall time per interval: median ${median(wall).toFixed(1)} ms, worst ${worst(wall).toFixed(1)} ms\n` +
      `  database CPU per interval: median ${median(cpu)} ms, worst ${worst(cpu)} ms (10 ms ticks)\n` +
      `  load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} on ${cpus().length} cores`,
  );
} finally {
  await db.close();
  await scratch.drop();
}
