/** The sending process of runOpenLoopApart: one run, its result sent back, then exit. */
import type { OpenLoopJob } from './open-loop-apart.js';
import { runOpenLoop } from './open-loop.js';

process.once('message', (job: OpenLoopJob) => {
  void runOpenLoop(job.url, job.body, job.options).then((result) =>
    process.send?.(result, () => process.disconnect()),
  );
});
