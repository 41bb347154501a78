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

/** Every process whose command line passes `test`. */
function pidsWhere(test: (commandLine: string) => boolean): number[] {
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
      if (test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/** The PostgreSQL backends serving connections to `database` (their title names it). */
function backendPids(database: string): number[] {
  return pidsWhere(
    (title) => title.startsWith('postgres: ') && title.split(' ').includes(database),
  );
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
  machine: { busyMs: number; totalMs: number } | undefined;
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
    machine: machineCpu(),
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
  /**
   * Cores the rest of the machine kept busy meanwhile: everything but the server, the
   * database's backends and the load generator (PostgreSQL's WAL writer and checkpointer, and
   * whatever else runs on a shared machine). Much above 0.1, the run was disturbed.
   */
  otherCores: number | undefined;
  /** Cores the whole machine kept busy meanwhile, everything included. */
  machineCores: number | undefined;
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
  const loadGenerator = after.loadGenerator - before.loadGenerator;
  const machine =
    before.machine && after.machine ? after.machine.busyMs - before.machine.busyMs : undefined;
  return {
    serverMsPerRequest: per(server),
    postgresMsPerRequest: after.postgres.size > 0 ? per(postgres) : undefined,
    loadGeneratorMsPerRequest: per(loadGenerator) ?? NaN,
    serverCoreShare: server === undefined ? undefined : server / wallMs,
    serverWaitedForCore: waited === undefined ? undefined : waited / wallMs,
    otherCores:
      machine === undefined || server === undefined
        ? undefined
        : Math.max(0, machine - server - postgres - loadGenerator) / wallMs,
    machineCores: machine === undefined ? undefined : machine / wallMs,
  };
}

/**
 * The start of a sum of spans (see addSpan): a snapshot of nothing used yet, so that
 * `cpuUse(noSpans(), sum, requests)` gives the figures of all the spans added to `sum`.
 */
export function noSpans(): CpuSnapshot {
  return {
    at: 0,
    server: 0,
    serverRunQueue: 0,
    postgres: new Map(),
    loadGenerator: 0,
    machine: { busyMs: 0, totalMs: 0 },
  };
}

/** Adds what was used between `before` and `after` to `sum` (which started as noSpans()). */
export function addSpan(sum: CpuSnapshot, before: CpuSnapshot, after: CpuSnapshot): void {
  const add = (total: number | undefined, from: number | undefined, to: number | undefined) =>
    total === undefined || from === undefined || to === undefined ? undefined : total + to - from;
  sum.at += after.at - before.at;
  sum.server = add(sum.server, before.server, after.server);
  sum.serverRunQueue = add(sum.serverRunQueue, before.serverRunQueue, after.serverRunQueue);
  if (after.postgres.size > 0)
    sum.postgres.set(0, (sum.postgres.get(0) ?? 0) + cpuBetween(before.postgres, after.postgres));
  sum.loadGenerator += after.loadGenerator - before.loadGenerator;
  sum.machine =
    sum.machine && before.machine && after.machine
      ? {
          busyMs: sum.machine.busyMs + after.machine.busyMs - before.machine.busyMs,
          totalMs: sum.machine.totalMs + after.machine.totalMs - before.machine.totalMs,
        }
      : undefined;
}

/** CPU milliseconds of each of `pids` so far (a process that ended is left out). */
export function cpuOfPids(pids: number[]): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    const ms = cpuMsOfPid(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}

/** The PostgreSQL backends serving `database`. */
export function postgresBackends(database: string): number[] {
  return backendPids(database);
}

/** Every process whose command line starts with `prefix` (`postgres`, `redis-server`). */
export function pidsStartingWith(prefix: string): number[] {
  return pidsWhere((commandLine) => commandLine.startsWith(prefix));
}

/** CPU milliseconds used between two readings of the same pids (new pids count from zero). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** The whole machine's CPU time so far, busy and in all (every core), in ms; from /proc/stat. */
export function machineCpu(): { busyMs: number; totalMs: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number) as number[];
    const busy =
      (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    const total = busy + (idle ?? 0) + (iowait ?? 0);
    return { busyMs: (busy * 1000) / TICKS_PER_SECOND, totalMs: (total * 1000) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}
