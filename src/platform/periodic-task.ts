import type { Logger } from './logger.js';

export interface PeriodicTaskOptions<Run> {
  log: Logger;
  /** Time from the end of one run to the start of the next. */
  intervalMs: number;
  /** Time from `start()` to the first run; the interval when not given. */
  firstRunDelayMs?: number;
  /** The log line of a failed run: what failed, and when it is tried again. */
  failure: string;
  run(): Promise<Run>;
  /** Logs what a run did, given how long it took. */
  report?(run: Run, ms: number): void;
}

/**
 * Background work done every interval (event retention, alert evaluation). One timer, unref'd so
 * it never keeps the process alive; the next run is scheduled when one ends, and `runOnce()`
 * waits for a run in progress, so runs never overlap. A failed run is logged and the schedule
 * goes on. Tests drive `runOnce()`; the service calls `start()` and, on shutdown, `stop()`.
 */
export class PeriodicTask<Run> {
  private timer: NodeJS.Timeout | undefined;
  /** The latest run, settled either way: the next one starts after it. */
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly options: PeriodicTaskOptions<Run>) {}

  /** Runs now, once a run in progress has ended; rejects as the run does. */
  runOnce(): Promise<Run> {
    const run = (this.running ?? Promise.resolve()).then(() => this.options.run());
    const settled = run.catch(() => undefined);
    this.running = settled;
    void settled.then(() => {
      if (this.running === settled) this.running = undefined;
    });
    return run;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule(this.options.firstRunDelayMs ?? this.options.intervalMs);
  }

  /** Ends the schedule and waits for a run in progress (the work decides how soon it ends). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      void this.runAndLog().finally(() => {
        if (!this.stopped) this.schedule(this.options.intervalMs);
      });
    }, ms).unref();
  }

  private async runAndLog(): Promise<void> {
    const started = Date.now();
    try {
      const run = await this.runOnce();
      this.options.report?.(run, Date.now() - started);
    } catch (error) {
      this.options.log.error({ err: error }, this.options.failure);
    }
  }
}
