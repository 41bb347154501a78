import { join } from 'node:path';
import {
  closedLoopSamples,
  runClosedLoop,
  summariseClosedLoop,
  type ClosedLoopSamples,
} from './closed-loop.js';
import { totalOf } from './latency.js';
import { orderPayload } from './payload.js';
import { addSpan, cpuSnapshot, cpuUse, noSpans } from './process-cpu.js';
import type { ClosedLoopRow } from './closed-loop.js';
import { createScratchDatabase, runSql, type ScratchDatabase } from './scratch-database.js';
import type { RunningTarget, Target } from './targets.js';

/** Length of each turn of closedLoopsTakingTurns. */
const SLICE_SECONDS = 2.5;

/** More than any server here has answered: a signer prepares this many requests a second. */
const MOST_REQUESTS_PER_SECOND = 15_000;

export interface BenchRunOptions {
  /** PostgreSQL server the scratch databases are made on. */
  adminUrl: string;
  /** Length of each measured closed-loop run, and of the warm-up before a target's first. */
  seconds: number;
  warmupSeconds: number;
  /** Where each server's output goes. */
  logsDir: string;
  /** Prefix of the log files of this run. */
  stamp: string;
}

/**
 * What the parts of one benchmark run share: the options, the scratch databases and servers to
 * clean up (also on Ctrl-C), and the measured closed-loop run with the CPU it cost.
 */
export class BenchRun {
  private readonly cleanups: (() => Promise<void>)[] = [];

  constructor(readonly options: BenchRunOptions) {}

  logFile(key: string): string {
    return join(
      this.options.logsDir,
      `${this.options.stamp}-${key.replace(/[^a-z0-9]+/gi, '-')}.log`,
    );
  }

  /** Runs `cleanup` at the end of the run (or on `cleanUp()`), newest first; undo with the result. */
  onCleanup(cleanup: () => Promise<void>): () => void {
    this.cleanups.push(cleanup);
    return () => {
      const at = this.cleanups.indexOf(cleanup);
      if (at >= 0) this.cleanups.splice(at, 1);
    };
  }

  async cleanUp(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse())
      await cleanup().catch((e: unknown) => console.error(e));
  }

  /** A new empty database, dropped at the end of the run. */
  async scratch(label: string): Promise<ScratchDatabase> {
    const db = await createScratchDatabase(this.options.adminUrl, label);
    this.onCleanup(() => db.drop());
    return db;
  }

  /** Starts the target, warms it up (JIT, pools, caches), runs `work`, and stops it. */
  async withTarget(
    target: Target,
    db: Pick<ScratchDatabase, 'url'>,
    work: (running: RunningTarget) => Promise<void>,
  ): Promise<void> {
    const running = await this.start(target, db);
    try {
      await work(running);
    } finally {
      await running.stop();
    }
  }

  /** Starts and warms up the target; `stop()` ends it (the run's cleanup does, if nothing else). */
  async start(
    target: Target,
    db: Pick<ScratchDatabase, 'url'>,
  ): Promise<RunningTarget & { stop(): Promise<void> }> {
    const running = await target.start(db.url, this.logFile(target.key));
    const stop = () => running.server.stop();
    const forget = this.onCleanup(stop);
    this.prepareSigner(running, this.options.warmupSeconds);
    await runClosedLoop(running.url, orderPayload, 32, this.options.warmupSeconds, running.sender);
    return {
      ...running,
      async stop() {
        forget();
        await stop();
      },
    };
  }

  /**
   * One closed-loop run at `connections`, after a checkpoint, with the CPU time the server and
   * its PostgreSQL backends spent on it.
   */
  async closedLoop(
    target: Target,
    running: RunningTarget,
    db: Pick<ScratchDatabase, 'name'>,
    connections: number,
  ): Promise<ClosedLoopRow> {
    const [row] = await this.runInTurns([{ target, running }], db, connections, 1);
    return row as ClosedLoopRow;
  }

  /**
   * closedLoop for targets running side by side, taking turns: each target's run is cut into
   * slices of about SLICE_SECONDS, and the slices alternate A B, B A, A B... One row per target,
   * over all its slices. The machine's speed drifts by a fifth within seconds (everything on it
   * alike), so runs made one after the other compare it as much as the targets; slices this
   * short see the same machine.
   */
  closedLoopsTakingTurns(
    entries: { target: Target; running: RunningTarget }[],
    db: Pick<ScratchDatabase, 'name'>,
    connections: number,
  ): Promise<ClosedLoopRow[]> {
    const slices = Math.max(1, Math.round(this.options.seconds / SLICE_SECONDS));
    return this.runInTurns(entries, db, connections, slices);
  }

  /** The run's length in `slices` slices per target, after one checkpoint; a row per target. */
  private async runInTurns(
    entries: { target: Target; running: RunningTarget }[],
    db: Pick<ScratchDatabase, 'name'>,
    connections: number,
    slices: number,
  ): Promise<ClosedLoopRow[]> {
    const seconds = this.options.seconds / slices;
    const runs = entries.map(() => ({ samples: [] as ClosedLoopSamples[], cpu: noSpans() }));
    await this.checkpoint();
    for (let slice = 0; slice < slices; slice++) {
      const order = entries.map((_, i) => i);
      if (slice % 2 === 1) order.reverse();
      for (const i of order) {
        const { running } = entries[i] as (typeof entries)[number];
        const run = runs[i] as (typeof runs)[number];
        this.prepareSigner(running, seconds);
        const before = cpuSnapshot(running.server.pid, db.name);
        run.samples.push(
          await closedLoopSamples(running.url, orderPayload, connections, seconds, running.sender),
        );
        addSpan(run.cpu, before, cpuSnapshot(running.server.pid, db.name));
      }
    }
    return entries.map(({ target }, i) => {
      const run = runs[i] as (typeof runs)[number];
      const result = summariseClosedLoop(run.samples);
      return {
        key: target.key,
        target: target.label,
        ...result,
        cpu: cpuUse(noSpans(), run.cpu, result.latency.count + totalOf(result.non200)),
      };
    });
  }

  /** Signs a run's requests before it starts, so that its load generator does not. */
  private prepareSigner(running: RunningTarget, seconds: number): void {
    running.sender?.prepare(Math.ceil(seconds * MOST_REQUESTS_PER_SECOND));
  }

  /** Flushes dirty pages now, so a checkpoint does not land in the middle of a measured run. */
  async checkpoint(): Promise<void> {
    await runSql(this.options.adminUrl, 'checkpoint');
  }
}
