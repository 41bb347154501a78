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
 * with exit code 1 once `timeoutMs` have passed, whatever its dependencies are doing (a database
 * that does not answer can hold a graceful shutdown forever), after logging the steps still
 * running. Events the process still held are then claimed again by any worker once their lease ends.
 */
export function startShutdownDeadline(
  log: Logger,
  timeoutMs: number,
  exit: (code: number) => void = (code) => process.exit(code),
): { step: ShutdownStep; cancel: () => void } {
  const running = new Set<string>();
  const started = Date.now();
  // Not unref'd: this timer is what guarantees the end when everything else hangs.
  const timer = setTimeout(() => {
    log.error(
      { waitingFor: [...running], timeoutMs, elapsedMs: Date.now() - started },
      'shutdown deadline passed; exiting without finishing',
    );
    exit(1);
  }, timeoutMs);
  const step: ShutdownStep = async (what, work) => {
    running.add(what);
    try {
      return await work();
    } finally {
      running.delete(what);
    }
  };
  return { step, cancel: () => clearTimeout(timer) };
}
