import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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
  destroy(): void;
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
    destroy() {
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
