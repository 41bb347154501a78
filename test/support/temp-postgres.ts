import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server-process.js';

const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
const binDir = versions.length ? `/usr/lib/postgresql/${versions.sort().at(-1)}/bin` : undefined;

/** A PostgreSQL server binary is installed (tests that stop a server start their own). */
export const canStartPostgres = Boolean(binDir && existsSync(join(binDir, 'initdb')));

export interface TempPostgres {
  url: string;
  stop(): void;
  start(): void;
  /**
   * SIGSTOP to the server and all its processes; resolves once every one of them is stopped:
   * connections stay open, nothing answers.
   */
  pause(): Promise<void>;
  /** SIGCONT: the server carries on where it was paused. */
  resume(): void;
  destroy(): void;
}

/** The fields of /proc/<pid>/stat after the command name (state, parent pid, …); none once it ended. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // ended meanwhile
  }
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The postmaster's children: one per connection, and the helpers. */
function childPids(postmaster: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && statFields(name)?.[1] === String(postmaster))
    .map(Number);
}

function serverPids(dataDir: string): number[] {
  const postmaster = postmasterPid(dataDir);
  return [postmaster, ...childPids(postmaster)];
}

/** Sends `signal` to each of `pids` that is still there. */
function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/**
 * Stops `pids` and resolves once none of them can run: `kill` only queues the signal, and a
 * process stops (state T) when it leaves the system call it is in, a fork or an fsync included.
 */
async function stopAll(pids: number[]): Promise<void> {
  signalAll(pids, 'SIGSTOP');
  const running = () => pids.filter((pid) => !['T', 'Z', undefined].includes(statFields(pid)?.[0]));
  const deadline = Date.now() + 10_000;
  while (running().length > 0) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL processes ${running()} did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * A PostgreSQL server of the test's own, in a temporary data directory on a spare port, so a
 * test can stop it without touching the shared server. Runs as the postgres user when root.
 */
export async function startTempPostgres(): Promise<TempPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'hookprompt-pg-'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (tool: string, args: string[]) => {
    const command = join(binDir as string, tool);
    if (asRoot)
      execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  };
  run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=on`;
  const start = () =>
    run('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop: () => run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']),
    async pause() {
      // The postmaster first, and seen stopped before its children are listed. A fork it is in
      // when signalled still completes, and the new backend is not stopped with it (a signal to
      // one process is not passed on to the child it is forking). Listed before that fork
      // returned, such a backend was missed and kept running: statements sent after pause()
      // committed, and a webhook sent "during" the pause got a 200.
      const postmaster = postmasterPid(dataDir);
      await stopAll([postmaster]);
      await stopAll(childPids(postmaster));
    },
    resume: () => signalAll(serverPids(dataDir), 'SIGCONT'),
    destroy() {
      try {
        signalAll(serverPids(dataDir), 'SIGCONT');
      } catch {
        // not running
      }
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
