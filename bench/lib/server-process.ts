import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** Servers run from the project root, where `--import tsx` and relative paths resolve. */
export const projectRoot = join(import.meta.dirname, '..', '..');

export interface ServerProcess {
  name: string;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  logFile: string;
  /** How it ended when it has ended on its own or been stopped (`code 1`, `signal SIGKILL`); else undefined. */
  ended(): string | undefined;
  /** SIGTERM, so the server shuts down in order (and `--cpu-prof` writes its profile); SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServerSpec {
  name: string;
  /** Arguments to `node`: flags, then the script. */
  nodeArgs: string[];
  env: Record<string, string>;
  logFile: string;
  /** How long it may take to answer at all (default 30 s). */
  startWithinMs?: number;
}

/**
 * Starts a server as a child process, so that it has an event loop (and, on a machine with
 * cores to spare, a core) of its own instead of sharing the load generator's. `PORT` (and, for
 * `ROLE=worker`, `WORKER_PORT`) is added to its environment; it is ready once it answers HTTP at
 * all.
 */
export async function startServer(spec: ServerSpec): Promise<ServerProcess> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const log = openSync(spec.logFile, 'a');
  const child = spawn(process.execPath, spec.nodeArgs, {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...spec.env,
      PORT: String(port),
      // A worker-only process listens on WORKER_PORT (PORT + 1 unless set): the same port here.
      ...(spec.env.ROLE === 'worker' ? { WORKER_PORT: String(port) } : {}),
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );

  try {
    await waitUntilAnswering(origin, child, spec);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    name: spec.name,
    pid: child.pid as number,
    origin,
    logFile: spec.logFile,
    ended() {
      if (child.signalCode !== null) return `signal ${child.signalCode}`;
      if (child.exitCode !== null) return `code ${child.exitCode}`;
      return undefined;
    },
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitUntilAnswering(
  origin: string,
  child: ChildProcess,
  spec: ServerSpec,
): Promise<void> {
  const limitMs = spec.startWithinMs ?? 30_000;
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `${spec.name} exited with code ${child.exitCode} at start-up:\n${tail(spec.logFile)}`,
      );
    }
    try {
      // hookprompt takes its port before the database is prepared and answers 503 meanwhile;
      // the baselines have no /readyz and answer it 404 once they listen.
      const res = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status !== 503) return;
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  throw new Error(`${spec.name} did not answer within ${limitMs / 1000} s:\n${tail(spec.logFile)}`);
}

function tail(file: string): string {
  return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
}

/** A port nobody listens on right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
