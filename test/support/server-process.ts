import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { projectRoot } from '../../src/platform/paths.js';

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (nothing with `unreadOutput`). */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | string | null>;
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ServerProcessOptions {
  /** The program and its arguments; by default `src/main.ts` run by node, as `npm start` does. */
  command?: [string, ...string[]];
  cwd?: string;
  /** Give the process no PORT of its own (it reads it elsewhere, e.g. from a .env file). */
  port?: number;
  /** Never read the process's stdout and stderr: its pipes fill up, like a reader that stopped. */
  unreadOutput?: boolean;
  /** How long it may take to answer (30 s): longer for a command that migrates first. */
  answerWithinMs?: number;
}

/** The node flag that runs TypeScript, usable from any working directory. */
export const TSX_IMPORT = ['--import', import.meta.resolve('tsx')];

/** Starts `src/main.ts` as its own process (as `npm start` does) and waits until it answers. */
export async function startServerProcess(
  env: Record<string, string>,
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  // A worker answers on WORKER_PORT (PORT + 1 unless set): there is the port waited for.
  const worker = env.ROLE === 'worker';
  const ownPort = worker ? env.WORKER_PORT : env.PORT;
  const port = options.port ?? (ownPort ? Number(ownPort) : await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const [program, ...args] = options.command ?? [
    process.execPath,
    ...TSX_IMPORT,
    join(projectRoot, 'src/main.ts'),
  ];
  const child = spawn(program, args, {
    cwd: options.cwd ?? projectRoot,
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      PUBLIC_BASE_URL: baseUrl,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-process-')),
      ...env,
      ...(options.port === undefined ? { [worker ? 'WORKER_PORT' : 'PORT']: String(port) } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a SIGKILL reaches the server even when it runs under npm or bash.
    detached: true,
  });
  let output = '';
  if (!options.unreadOutput) {
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
  }
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  killAtExit(child, exited);

  try {
    await waitUntilAnswering(`${baseUrl}/healthz`, exited, () => output, options.answerWithinMs);
  } catch (error) {
    // A process that never answered is no test's to stop: end it here, or it outlives the run.
    killGroup(child);
    await exited;
    throw error;
  }
  return {
    baseUrl,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      // npm forwards a SIGTERM to the server; a SIGKILL it cannot, so that goes to the group.
      if (signal === 'SIGKILL') killGroup(child);
      else child.kill(signal);
      return exited;
    },
  };
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) killGroup(child);
});

/** Kills the process and whatever it started (npm's node, bash's npm). */
function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * Kills the processes still running when the test process ends (a test that failed before its
 * `stop`, a worker torn down by a time-out), so no server is left holding a port or a data dir.
 */
function killAtExit(child: ChildProcess, exited: Promise<unknown>): void {
  running.add(child);
  void exited.then(() => running.delete(child));
}

async function waitUntilAnswering(
  url: string,
  exited: Promise<unknown>,
  output: () => string,
  withinMs = 30_000,
): Promise<void> {
  let ended = false;
  void exited.then(() => (ended = true));
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (ended) throw new Error(`server process exited during start-up:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`server did not answer within ${withinMs / 1000} s:\n${output()}`);
}
