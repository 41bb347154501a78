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
  /** SIGSTOP to the server and all its processes: connections stay open, nothing answers. */
  pause(): void;
  /** SIGCONT: the server carries on where it was paused. */
  resume(): void;
  destroy(): void;
}

/** The postmaster's pid and those of its children (one per connection, and the helpers). */
function serverPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // The parent pid is the 4th field, after the command name in parentheses.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
  return [postmaster, ...children];
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
    pause() {
      // The postmaster first, so that no new connection process starts meanwhile.
      const [postmaster] = serverPids(dataDir);
      process.kill(postmaster as number, 'SIGSTOP');
      serverPids(dataDir).forEach((pid) => process.kill(pid, 'SIGSTOP'));
    },
    resume: () => serverPids(dataDir).forEach((pid) => process.kill(pid, 'SIGCONT')),
    destroy() {
      try {
        serverPids(dataDir).forEach((pid) => process.kill(pid, 'SIGCONT'));
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
