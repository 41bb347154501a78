import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../platform/config.js';
import { shutdownBudget } from '../platform/shutdown.js';

/** What every queue worker of a process is configured with. */
export interface QueueSettings {
  /** How long a claimed item is held before another process may take it. */
  leaseMs: number;
  pollIntervalMs: number;
  /** How long `stop()` lets work in progress finish before cutting it short. */
  shutdownGraceMs: number;
}

/** Room for the database writes around one send before another process may take the item. */
const SEND_LEASE_MARGIN_MS = 5_000;

/**
 * The settings of a queue whose work is an AI call (WORKER_LEASE_MS) or an outbound send (the
 * delivery timeout and a margin). The grace fits within the process's own shutdown deadline,
 * with time left to give the items back.
 */
export function queueSettings(config: Config, work: 'ai call' | 'send'): QueueSettings {
  return {
    leaseMs:
      work === 'ai call' ? config.workerLeaseMs : config.delivery.timeoutMs + SEND_LEASE_MARGIN_MS,
    pollIntervalMs: config.workerPollIntervalMs,
    shutdownGraceMs: Math.min(
      config.workerShutdownGraceMs,
      shutdownBudget(config.shutdownTimeoutMs).workerGraceMs,
    ),
  };
}

/**
 * A new id for a queue worker of this process, as its statements write it into `locked_by`.
 * The pid alone is not enough: in a container every restart is pid 1 on the same host name.
 */
export function queueWorkerId(queue?: string): string {
  const random = randomBytes(4).toString('hex');
  return [hostname(), process.pid, queue, random].filter((part) => part !== undefined).join(':');
}
