/**
 * What the audit log's write costs the changes it records (issue 55): a channel update (PATCH
 * of its template through ChannelsService.update) and a replay (EventsReplay.replayOne), each
 * timed in-process on PostgreSQL, p50/p99 over the runs. "Without" is the same calls in a build
 * of the service from before the audit log (`--before=<a checkout of it>`, e.g. made with
 * `git archive <commit> | tar -x -C /tmp/before` and a node_modules link): the difference is
 * the audit write (and the transaction it needs where the change had none).
 *
 *   npx tsx bench/audit-bench.ts --before=/tmp/audit-before [--runs=500]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres);
 * each build runs on a scratch database of its own, dropped at the end.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from './lib/scratch-database.js';

const { values: flags } = parseArgs({
  options: { runs: { type: 'string', default: '500' }, before: { type: 'string' } },
});
const runs = Number(flags.runs);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Timings {
  update: number[];
  replay: number[];
}

/** Loads the service from `root` (this checkout or the one before) and times its two changes. */
async function measure(root: string, label: string): Promise<Timings> {
  const scratch = await createScratchDatabase(adminUrl, label);
  // Typed as this checkout's modules: the build before has the same shapes for what is used.
  const { parseConfig } = (await import(
    join(root, 'src/platform/config.ts')
  )) as typeof import('../src/platform/config.js');
  const { createContext } = (await import(
    join(root, 'src/context.ts')
  )) as typeof import('../src/context.js');
  const { createLogger } = (await import(
    join(root, 'src/platform/logger.ts')
  )) as typeof import('../src/platform/logger.js');
  const config = parseConfig({
    DATABASE_URL: scratch.url,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'audit-bench-')),
    PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    LOG_LEVEL: 'silent',
    ROLE: 'web',
  });
  const ctx = await createContext(config, { log: createLogger('silent') });
  try {
    await ctx.start({ background: false });
    const workspaceId: string = ctx.defaultWorkspaceId;
    const channel = await ctx.channels.create(workspaceId, {
      name: 'Bench',
      template: 'Order {{order.id}}',
    });
    // Finished events to replay, one per run (a replay needs a finished event).
    await ctx.db.query(
      `insert into events (workspace_id, channel_id, status, payload, completed_at)
       select $1, $2, 'replied', '{"order":{"id":1}}', now() from generate_series(1, $3::int)`,
      [workspaceId, channel.id, runs + 20],
    );
    await ctx.db.query(`update workspaces set chat_quota = 100000000 where id = $1`, [workspaceId]);
    const { rows } = await ctx.db.query<{ id: string }>(
      `select id::text from events where channel_id = $1 order by id`,
      [channel.id],
    );
    const timings: Timings = { update: [], replay: [] };
    for (let i = 0; i < runs + 20; i++) {
      let start = performance.now();
      await ctx.channels.update(workspaceId, channel.id, { template: `Order {{order.id}} #${i}` });
      const update = performance.now() - start;
      start = performance.now();
      await ctx.eventsReplay.replayOne(workspaceId, (rows[i] as { id: string }).id);
      const replay = performance.now() - start;
      // The first 20 warm the connections, the plans and the JIT.
      if (i >= 20) {
        timings.update.push(update);
        timings.replay.push(replay);
      }
    }
    return timings;
  } finally {
    await ctx.stop();
    await scratch.drop();
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

const row = (name: string, values: number[]) =>
  `${name.padEnd(28)} p50 ${percentile(values, 50).toFixed(2).padStart(6)} ms   p99 ${percentile(values, 99).toFixed(2).padStart(6)} ms`;

const here = resolve(import.meta.dirname, '..');
console.log(
  `audit-bench: ${runs} runs each, PostgreSQL, ${cpus().length} CPUs, load ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`,
);
const withAudit = await measure(here, 'audit');
console.log(row('channel update, with audit', withAudit.update));
console.log(row('replay, with audit', withAudit.replay));
if (flags.before) {
  const before = await measure(resolve(flags.before), 'noaudit');
  console.log(row('channel update, before', before.update));
  console.log(row('replay, before', before.replay));
}
