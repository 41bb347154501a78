import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes, from Linux's /proc. On a shared 2-core machine throughput swings with
 * what else runs; CPU time per request does not, so it says where the cost is even when the
 * rates are noisy. Elsewhere than Linux every figure is undefined.
 */

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every common Linux build. */
const TICKS_PER_SECOND = 100;

function cpuMsOfPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The PostgreSQL backends serving connections to `database` (their title names it). */
function backendPids(database: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.split(' ').includes(database))
        pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/** Milliseconds the process's main (JavaScript) thread has waited, runnable, for a free core. */
function runQueueMsOfPid(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  at: number;
  server: number | undefined;
  serverRunQueue: number | undefined;
  postgres: Map<number, number>;
  loadGenerator: number;
}

export function cpuSnapshot(serverPid: number, database: string): CpuSnapshot {
  const postgres = new Map<number, number>();
  for (const pid of backendPids(database)) {
    const ms = cpuMsOfPid(pid);
    if (ms !== undefined) postgres.set(pid, ms);
  }
  const own = process.cpuUsage();
  return {
    at: performance.now(),
    server: cpuMsOfPid(serverPid),
    serverRunQueue: runQueueMsOfPid(serverPid),
    postgres,
    loadGenerator: (own.user + own.system) / 1000,
  };
}

export interface CpuUse {
  /** CPU milliseconds per answered request, by process. */
  serverMsPerRequest: number | undefined;
  postgresMsPerRequest: number | undefined;
  loadGeneratorMsPerRequest: number;
  /**
   * CPU time of all the server's threads over wall time, as a share of one core. Near 1 (with
   * little waiting) its single JavaScript thread was the limit; GC helper threads can lift it
   * past 1.
   */
  serverCoreShare: number | undefined;
  /**
   * Share of the run the server's JavaScript thread was ready to run but every core was taken
   * (by PostgreSQL, the load generator, or anything else on the machine): CPU starvation.
   */
  serverWaitedForCore: number | undefined;
}

/**
 * CPU used between two snapshots. PostgreSQL counts only the backends of the benchmark's
 * database (not the WAL writer or checkpointer, which every database on the server shares);
 * a backend that ended between the snapshots is missed, one that started counts from zero.
 */
export function cpuUse(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuUse {
  const wallMs = after.at - before.at;
  const delta = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined ? b - a : undefined;
  const server = delta(before.server, after.server);
  const waited = delta(before.serverRunQueue, after.serverRunQueue);
  let postgres = 0;
  for (const [pid, ms] of after.postgres) postgres += ms - (before.postgres.get(pid) ?? 0);
  const per = (ms: number | undefined) =>
    ms === undefined || requests === 0 ? undefined : ms / requests;
  return {
    serverMsPerRequest: per(server),
    postgresMsPerRequest: after.postgres.size > 0 ? per(postgres) : undefined,
    loadGeneratorMsPerRequest: per(after.loadGenerator - before.loadGenerator) ?? NaN,
    serverCoreShare: server === undefined ? undefined : server / wallMs,
    serverWaitedForCore: waited === undefined ? undefined : waited / wallMs,
  };
}
