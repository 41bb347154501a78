import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { OpenLoopOptions, OpenLoopResult } from './open-loop.js';
import { projectRoot } from './server-process.js';

/** What the parent sends the sending process: one run's arguments. */
export interface OpenLoopJob {
  url: string;
  body: string;
  options: Omit<OpenLoopOptions, 'onAccepted'>;
}

/**
 * runOpenLoop in a process of its own, with a heap of its own. The benchmark's main process holds
 * every earlier run's results and the signed sender's prepared requests; its garbage collector
 * paused it for 6–8 ms now and then, and while it did no request went out and no answer was
 * read, so the pause counted as the server's latency in the fixed-rate runs. A fresh process
 * holds nothing but the run it sends.
 */
export function runOpenLoopApart(
  url: string,
  body: string,
  options: OpenLoopJob['options'],
): Promise<OpenLoopResult> {
  const child = fork(fileURLToPath(new URL('./open-loop-child.ts', import.meta.url)), [], {
    cwd: projectRoot,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let result: OpenLoopResult | undefined;
    child.once('message', (message) => (result = message as OpenLoopResult));
    child.once('error', reject);
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`the sending process exited with ${code}`)),
    );
    child.send({ url, body, options } satisfies OpenLoopJob);
  });
}
