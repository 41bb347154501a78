/**
 * What one event costs PostgreSQL, step by step, with the service's own statements: stored by
 * the receiver's group commit (batches of 1, 16 and 64), then claimed, its attempt started and
 * finished by the worker, one at a time and in batches as the worker gathers them. The figures are the CPU time of the database backend (from /proc),
 * which does not depend on what else the machine is doing, unlike a rate, and the WAL written
 * (what the disk and any replica must take); they are the inputs of the capacity model in
 * bench/HISTORY.md.
 *
 *   npx tsx bench/database-cost.ts [--events=6400]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres); it
 * must run on this machine (its backend's CPU time is read from /proc).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import type { Database, Queryable } from '../src/db/database.js';
import { storeEventBatch, type IncomingEvent } from '../src/hooks/store-event-batch.js';
import { claimEvents } from '../src/worker/queue-claim.js';
import { finishEvents } from '../src/worker/queue-finish.js';
import { startAttempts } from '../src/worker/queue-start-attempt.js';
import { orderPayload } from './lib/payload.js';
import { createScratchDatabase } from './lib/scratch-database.js';

const { values: flags } = parseArgs({ options: { events: { type: 'string', default: '6400' } } });
const total = Number(flags.events);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WORKER = 'bench-worker';
const LEASE_MS = 60_000;

/** One connection whose backend's CPU time can be read. */
async function backend(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const stat = `/proc/${rows[0]!.pid}/stat`;
  const cpuMs = () => {
    const text = readFileSync(stat, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  const walBytes = async () => {
    const { rows } = await client.query<{ bytes: string }>(
      `select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint as bytes`,
    );
    return Number(rows[0]!.bytes);
  };
  const db: Queryable = {
    query: async (text, params, options) => {
      const result = await client.query({ text, values: params as unknown[], name: options?.name });
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
  };
  return { db, cpuMs, walBytes, end: () => client.end() };
}

async function seedChannel(db: Database) {
  const { rows } = await db.query<{ workspace_id: string; id: string }>(
    `with w as (insert into workspaces (name, chat_quota) values ('bench', 2000000000) returning id)
     insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
     select id, 'bench', 'Order {{order.id}}', 'bench-token', 'bench-hash' from w
     returning workspace_id, id`,
  );
  const channel = rows[0]!;
  return {
    id: channel.id,
    workspace_id: channel.workspace_id,
    webhook_token_hash: 'bench-hash',
    dedup: { mode: 'none', window_s: 86_400 },
  } as unknown as IncomingEvent['channel'];
}

interface Cost {
  cpuMs: number;
  walBytes: number;
}

/** Backend CPU (ms) and WAL (bytes) per event for `step`, run over `count` events. */
async function measure(
  meter: { cpuMs: () => number; walBytes: () => Promise<number> },
  count: number,
  step: () => Promise<number>,
): Promise<Cost> {
  const cpuBefore = meter.cpuMs();
  const walBefore = await meter.walBytes();
  let done = 0;
  while (done < count) {
    const n = await step();
    if (n === 0) break;
    done += n;
  }
  const walBytes = (await meter.walBytes()) - walBefore;
  return { cpuMs: (meter.cpuMs() - cpuBefore) / done, walBytes: walBytes / done };
}

async function main() {
  console.log(
    `# database cost per event — ${new Date().toISOString()}, ${cpus().length} CPUs, load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const scratch = await createScratchDatabase(adminUrl, 'dbcost');
  const pool = openPostgres({ url: scratch.url });
  try {
    await migrate(pool);
    const channel = await seedChannel(pool);
    const { db, end, ...meter } = await backend(scratch.url);
    const event: IncomingEvent = {
      channel,
      payload: orderPayload,
      headers: { 'content-type': 'application/json', 'user-agent': 'bench' },
      senderIp: '127.0.0.1',
      dedupKey: undefined,
    };
    // A Standard Webhooks sender's request as the event keeps it, with its delivery id as the
    // dedup key and the hash of its body (what `auto` duplicate detection stores for every event).
    let delivery = 0;
    const bodyHash = createHash('sha256').update(orderPayload).digest('hex');
    const signedEvent = (): IncomingEvent => {
      const id = `msg_bench_${++delivery}`;
      return {
        ...event,
        channel: { ...channel, dedup: { mode: 'auto', window_s: 86_400 } },
        headers: {
          ...event.headers,
          'webhook-id': id,
          'webhook-timestamp': '1795000000',
          'webhook-signature': `v1,${'x'.repeat(44)}`,
        },
        dedupKey: `webhook-id:${id}`,
        bodyHash,
      };
    };
    const storeIn =
      (size: number, make: () => IncomingEvent = () => event) =>
      async () => {
        // One statement committed on its own, as the receiver sends it.
        await storeEventBatch(db, Array.from({ length: size }, make), Date.now() + 60_000);
        return size;
      };
    const rows: [string, Cost][] = [];
    for (const size of [1, 16, 64]) {
      const count = size === 1 ? Math.min(total, 1000) : total;
      rows.push([`store, batches of ${size}`, await measure(meter, count, storeIn(size))]);
    }
    rows.push([
      'store signed + dedup key, batches of 64',
      await measure(meter, total, storeIn(64, signedEvent)),
    ]);
    // The worker's three statements per event, on the events just stored (claims of 8): each
    // one at a time, then gathered as the worker gathers them (the starts of a claim together,
    // the finishes of the events that end while the previous finish is written).
    const claimed: string[] = [];
    rows.push([
      'claim (8 at a time)',
      await measure(meter, total, async () => {
        const events = await claimEvents(db, WORKER, 8, LEASE_MS);
        claimed.push(...events.map((e) => e.id));
        return events.length;
      }),
    ]);
    // The first half one at a time, the second half in batches.
    const half = Math.floor(claimed.length / 2);
    const inBatches = (from: number, size: number, write: (ids: string[]) => Promise<unknown>) => {
      let next = from;
      return async () => {
        const ids = claimed.slice(next, Math.min(next + size, from === 0 ? half : claimed.length));
        next += ids.length;
        if (ids.length > 0) await write(ids);
        return ids.length;
      };
    };
    const start = (ids: string[]) =>
      startAttempts(
        db,
        WORKER,
        LEASE_MS,
        ids.map((eventId) => ({
          eventId,
          prompt: 'Order 1234567',
          missing: [],
          provider: 'default',
          model: null,
        })),
      );
    const finish = (ids: string[]) =>
      finishEvents(
        db,
        WORKER,
        ids.map((eventId) => ({
          eventId,
          outcome: { status: 'replied', reply: 'Thanks for your order 1234567 of 149.90 EUR.' },
          call: { provider: 'default', model: null, usage: null, latencyMs: 200, calls: [] },
        })),
      );
    const rest = claimed.length - half;
    rows.push(['start attempt, one at a time', await measure(meter, half, inBatches(0, 1, start))]);
    rows.push([
      'start attempt, 8 at a time',
      await measure(meter, rest, inBatches(half, 8, start)),
    ]);
    rows.push([
      'finish (replied), one at a time',
      await measure(meter, half, inBatches(0, 1, finish)),
    ]);
    rows.push([
      'finish (replied), 16 at a time',
      await measure(meter, rest, inBatches(half, 16, finish)),
    ]);
    await end();
    console.log(
      '\n| step | PostgreSQL CPU ms per event | WAL bytes per event |\n| --- | --- | --- |',
    );
    for (const [step, cost] of rows)
      console.log(`| ${step} | ${cost.cpuMs.toFixed(3)} | ${cost.walBytes.toFixed(0)} |`);
  } finally {
    await pool.close();
    await scratch.drop();
  }
}

await main();
