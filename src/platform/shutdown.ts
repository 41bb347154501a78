import { Worker } from 'node:worker_threads';
import type { Logger } from './logger.js';

/** Runs one named part of a shutdown, so that a late shutdown can say what it was waiting for. */
export type ShutdownStep = <T>(what: string, work: () => Promise<T>) => Promise<T>;

/**
 * How SHUTDOWN_TIMEOUT_MS is shared out: in-flight requests get 40 % of it to be answered, the
 * worker's AI calls and the reply deliveries (after them) 40 % to finish before their events
 * and messages are given back, and the rest is left for giving them back and closing connections.
 */
export function shutdownBudget(shutdownTimeoutMs: number): {
  drainMs: number;
  workerGraceMs: number;
} {
  return {
    drainMs: Math.floor(shutdownTimeoutMs * 0.4),
    workerGraceMs: Math.floor(shutdownTimeoutMs * 0.4),
  };
}

/**
 * The hard deadline of a shutdown: started when a process is asked to stop, it ends the process
 * with exit code 1 just before `timeoutMs` have passed, whatever its dependencies are doing (a
 * database that does not answer can hold a graceful shutdown forever), after logging the steps
 * still running. Events the process still held are then claimed again by any worker once their
 * lease ends. The timer runs on the event loop, which synchronous work can hold (a write that
 * blocks, an exit handler that never returns): a backstop on a thread of its own kills the
 * process at `timeoutMs` then.
 */
export function startShutdownDeadline(
  log: Logger,
  timeoutMs: number,
): { step: ShutdownStep; msLeft: () => number; cancel: () => void } {
  const running = new Set<string>();
  const started = Date.now();
  const backstop = startBackstop(started + timeoutMs, log);
  const exitAfterMs = timeoutMs - backstopMarginMs(timeoutMs);
  // Not unref'd: this timer is what guarantees the end when everything else hangs.
  const timer = setTimeout(() => {
    log.error(
      { waitingFor: [...running], timeoutMs, elapsedMs: Date.now() - started },
      'shutdown deadline passed; exiting without finishing',
    );
    process.exit(1);
  }, exitAfterMs);
  const step: ShutdownStep = async (what, work) => {
    running.add(what);
    try {
      return await work();
    } finally {
      running.delete(what);
    }
  };
  return {
    step,
    msLeft: () => Math.max(0, started + exitAfterMs - Date.now()),
    cancel: () => {
      clearTimeout(timer);
      void backstop.terminate();
    },
  };
}

/** How much earlier than the backstop the deadline's own timer fires: it ends a healthy process. */
function backstopMarginMs(timeoutMs: number): number {
  return Math.min(250, Math.floor(timeoutMs * 0.05));
}

/**
 * Kills the process (SIGKILL) at `deadline` (epoch ms) from a worker thread, whose timers run
 * even while the main thread is held. Unref'd: it never keeps a finished process alive.
 */
function startBackstop(deadline: number, log: Logger): Worker {
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), workerData.deadline - Date.now());`,
    { eval: true, workerData: { pid: process.pid, deadline }, execArgv: [] },
  );
  worker.on('error', (error) => log.warn({ err: error }, 'shutdown backstop not started'));
  worker.unref();
  return worker;
}
