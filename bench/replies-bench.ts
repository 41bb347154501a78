/**
 * Getting the reply back, measured on PostgreSQL (each part on a scratch database, dropped at
 * the end; servers run from the sources as child processes, the load comes from this one):
 *
 *   1. POST ?wait=10 with the echo provider, 200 requests/s evenly paced (open loop): the whole
 *      answer, from when each request was due to its last byte, every answer `replied`.
 *   2. 1,000 answers held at once on one ROLE=web process (no worker: nothing finishes them):
 *      its RSS before and while they are held, and its event-loop delay (p99) meanwhile.
 *   3. Reply delivery: N finished events delivered by one ROLE=worker process with 8 (--slots) delivery
 *      slots to a loopback receiver that verifies every message with the standardwebhooks
 *      package; deliveries per second, and no message twice.
 *
 *   npx tsx bench/replies-bench.ts [--seconds=20] [--held=1000] [--deliveries=5000] [--only=1,2,3]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { createServer, type IncomingMessage } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { startHookprompt } from './lib/hookprompt.js';
import { runOpenLoop } from './lib/open-loop.js';
import { orderPayload } from './lib/payload.js';
import { createScratchDatabase } from './lib/scratch-database.js';
import { startServer } from './lib/server-process.js';
import { metricValue } from './lib/server-metrics.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    held: { type: 'string', default: '1000' },
    deliveries: { type: 'string', default: '5000' },
    only: { type: 'string', default: '1,2,3' },
    slots: { type: 'string', default: '8' },
  },
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = new Set(flags.only.split(','));
const entry = { nodeArgs: ['--import', 'tsx', 'src/main.ts'] };
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const logFile = (name: string) => join('/tmp', `hookprompt-replies-bench-${name}.log`);

console.log(
  `# replies benchmark — ${new Date().toISOString()}, ${cpus().length} CPUs, load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);

if (only.has('1')) await waitLatency(Number(flags.seconds));
if (only.has('2')) await heldWaits(Number(flags.held));
if (only.has('3')) await deliveryThroughput(Number(flags.deliveries));

/** Part 1: the whole answer of POST ?wait=10, at 200 requests/s. */
async function waitLatency(seconds: number): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'wait');
  const { server, webhookUrl } = await startHookprompt({
    name: 'wait',
    entry,
    databaseUrl: database.url,
    logFile: logFile('wait'),
    env: { ROLE: 'all', WORKER_CONCURRENCY: '16' },
  });
  try {
    // Warm-up: connections, JIT, the channel cache.
    await runOpenLoop(`${webhookUrl}?wait=10`, orderPayload, { rate: 50, seconds: 2 });
    // The same load without waiting, for comparison: what storing alone costs here.
    const plain = await runOpenLoop(webhookUrl, orderPayload, { rate: 200, seconds });
    console.log(
      `\n## 1a. POST without wait, 200 req/s for ${seconds} s (baseline)\n` +
        `whole answer: p50 ${plain.latency.p50.toFixed(1)} ms, p99 ${plain.latency.p99.toFixed(1)} ms, max ${plain.latency.max.toFixed(1)} ms`,
    );
    await delay(3_000);
    const result = await runOpenLoop(`${webhookUrl}?wait=10`, orderPayload, { rate: 200, seconds });
    const statuses = await countStatuses(database.url);
    console.log(
      `\n## 1. POST ?wait=10, echo provider, 200 req/s for ${seconds} s\n` +
        `answers: ${result.latency.count} (non-200: ${JSON.stringify(result.non200)}); events by status: ${JSON.stringify(statuses)}\n` +
        `whole answer: p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms, max ${result.latency.max.toFixed(1)} ms`,
    );
  } finally {
    await server.stop();
    await database.drop();
  }
}

/** Part 2: RSS and event-loop delay of one web process holding `count` answers. */
async function heldWaits(count: number): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'held');
  const { server, webhookUrl } = await startHookprompt({
    name: 'held',
    entry,
    databaseUrl: database.url,
    logFile: logFile('held'),
    env: { ROLE: 'web', SYNC_WAIT_MAX_S: '120' },
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: count + 10 });
  try {
    // Warm-up without holding anything, so RSS before includes a working receiver.
    await runOpenLoop(webhookUrl, orderPayload, { rate: 200, seconds: 2 });
    await delay(1_000);
    const before = rssOf(server.pid);
    await lagP99(server.origin); // resets the delay histogram
    await delay(3_000);
    // The same process idle, for comparison: on a busy machine the delay is mostly other load.
    const idleLag = await lagP99(server.origin);
    const answers = Array.from({ length: count }, () => post(agent, `${webhookUrl}?wait=60`));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const started = Date.now();
    while (
      Number(
        (await client.query(`select count(*) from events where status = 'pending'`)).rows[0].count,
      ) < count
    ) {
      if (Date.now() - started > 60_000) throw new Error('the held requests were not all stored');
      await delay(100);
    }
    // From here on the process only holds them (and its once-a-second fallback poll runs).
    await lagP99(server.origin);
    await delay(3_000);
    const during = rssOf(server.pid);
    const lag = await lagP99(server.origin);
    const connections = Number(
      (
        await client.query(`select count(*) from pg_stat_activity where datname = $1`, [
          database.name,
        ])
      ).rows[0].count,
    );
    await client.end();
    console.log(
      `\n## 2. ${count} answers held at once on one ROLE=web process\n` +
        `RSS before ${mb(before)} MB, while held ${mb(during)} MB (+${mb(during - before)} MB); ` +
        `event-loop delay p99 while held ${(lag * 1000).toFixed(1)} ms (idle, before: ${(idleLag * 1000).toFixed(1)} ms); ` +
        `connections to the database: ${connections}`,
    );
    await server.stop(); // held answers are cut short with "received"
    const bodies = await Promise.all(answers);
    const received = bodies.filter((body) => body.includes('"status":"received"')).length;
    console.log(`at shutdown: ${received} of ${count} held requests answered "received"`);
  } finally {
    agent.destroy();
    await server.stop();
    await database.drop();
  }
}

/** Part 3: deliveries per second from one worker process with 8 delivery slots. */
async function deliveryThroughput(count: number): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'delivery');
  const seen = new Map<string, number>();
  let invalid = 0;
  let first = 0;
  let last = 0;
  let webhook: Webhook | undefined;
  const receiver = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        webhook?.verify(
          Buffer.concat(chunks).toString('utf8'),
          req.headers as Record<string, string>,
        );
      } catch {
        invalid++;
      }
      const id = String(req.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      first ||= performance.now();
      last = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/replies`;

  // A web process to set up the channel; it delivers nothing (ROLE=web).
  const { server: web } = await startHookprompt({
    name: 'delivery-web',
    entry,
    databaseUrl: database.url,
    logFile: logFile('delivery-web'),
    env: { ROLE: 'web', DELIVERY_ALLOW_PRIVATE: 'true' },
  });
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const channelId = (await client.query(`select id from channels order by id desc limit 1`))
      .rows[0].id as string;
    const secret = `whsec_${Buffer.from('hookprompt-bench-reply-secret-32b').toString('base64')}`;
    await client.query(
      `with reply as (
         insert into destinations (channel_id, role, kind, url)
         values ($1, 'reply_url', 'webhook', $2)
       )
       update channels set reply_secret = $3 where id = $1`,
      [channelId, receiverUrl, secret],
    );
    webhook = new Webhook(secret);
    // N events, finished in one statement: the completion trigger (migrations/0045) creates N deliveries.
    await client.query(
      `insert into events (workspace_id, channel_id, status, payload, prompt, reply, attempts)
       select workspace_id, id, 'processing', $2, 'Order 1', 'A reply', 1
       from channels, generate_series(1, $3) where channels.id = $1`,
      [channelId, orderPayload, count],
    );
    await client.query(
      `update events set status = 'replied', completed_at = now() where channel_id = $1`,
      [channelId],
    );
    await client.end();

    const started = performance.now();
    const worker = await startServerRole(database.url);
    while (seen.size < count && performance.now() - started < 120_000) await delay(50);
    await worker.stop();
    const repeated = [...seen.values()].filter((n) => n > 1).length;
    const seconds = (last - first) / 1000;
    console.log(
      `\n## 3. reply delivery, one ROLE=worker process, ${flags.slots} delivery slots, ${count} messages\n` +
        `delivered ${seen.size} distinct messages in ${seconds.toFixed(2)} s (first to last): ${(seen.size / seconds).toFixed(0)} deliveries/s; ` +
        `signatures failing verification: ${invalid}; messages received twice: ${repeated}`,
    );
  } finally {
    await web.stop();
    receiver.close();
    await database.drop();
  }
}

function startServerRole(databaseUrl: string) {
  return startServer({
    name: 'delivery-worker',
    nodeArgs: entry.nodeArgs,
    logFile: logFile('delivery-worker'),
    env: {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      ROLE: 'worker',
      LOG_LEVEL: 'warn',
      WORKER_CONCURRENCY: flags.slots,
      DELIVERY_ALLOW_PRIVATE: 'true',
    },
  });
}

function post(agent: http.Agent, url: string): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', () => resolve('error'));
    req.end(orderPayload);
  });
}

async function countStatuses(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ status: string; n: string }>(
    `select status, count(*) as n from events group by status`,
  );
  await client.end();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}

/** The server's event-loop delay p99 since the previous call (prom-client resets it per scrape). */
async function lagP99(origin: string): Promise<number> {
  return (await metricValue(origin, 'nodejs_eventloop_lag_p99_seconds')) ?? NaN;
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}
