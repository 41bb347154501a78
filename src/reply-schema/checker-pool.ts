import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckerMessage, SchemaTask, TaskAnswer } from './pooled-checker.js';

export interface CheckerPoolLimits {
  /** Checkers (worker threads) running at once; more tasks wait in line. */
  checkers: number;
  /** How long compiling a schema may take. */
  compileMs: number;
  /** How long checking one reply may take, once its schema is compiled. */
  checkMs: number;
  /** How long making a sample reply may take, once its schema is compiled. */
  sampleMs: number;
}

/*
 * A schema's `pattern`s are ECMAScript regular expressions, and the engine backtracks: one
 * pattern and a reply the payload can steer may take hours to check, and compiling a large
 * schema takes seconds. Neither can be interrupted on the thread that runs it, so both run in
 * checkers, Node worker threads off the event loop, which are ended (and replaced) when they
 * overrun; the main thread only waits.
 */
const DEFAULT_LIMITS: CheckerPoolLimits = {
  // A check that overruns keeps its core busy until it is ended: one core stays for the service.
  checkers: Math.max(1, Math.min(2, availableParallelism() - 1)),
  compileMs: 5_000,
  checkMs: 250,
  // Samples are the echo stand-in's, made from the channel's own schema, not from what a sender
  // posts: room for a large schema, still bounded.
  sampleMs: 1_000,
};

// A checker's heap holds compiled schemas and one parsed reply (at most a few MB of JSON).
const CHECKER_HEAP_MB = 256;

interface Job {
  task: SchemaTask;
  resolve: (answer: TaskAnswer) => void;
  reject: (error: Error) => void;
}

interface Checker {
  worker: Worker;
  ready: boolean;
  running?: { id: number; job: Job; timer: NodeJS.Timeout };
}

/** Compiles reply schemas and checks replies against them off the main thread, within time limits. */
export class CheckerPool {
  private readonly checkers = new Set<Checker>();
  private readonly queue: Job[] = [];
  private lastId = 0;

  constructor(private readonly limits: CheckerPoolLimits = DEFAULT_LIMITS) {}

  /** Why a schema (JSON text) cannot be used, or undefined when it compiles. */
  async compile(schema: string): Promise<string | undefined> {
    return (await this.run({ schema })).problem ?? undefined;
  }

  /** Why a reply (JSON text) does not fit a schema (JSON text), or undefined when it does. */
  async check(schema: string, reply: string): Promise<string | undefined> {
    return (await this.run({ schema, reply })).problem ?? undefined;
  }

  /**
   * JSON text valid against a schema (JSON text), the same for the same seed, or why none could
   * be made (the echo stand-in's structured replies).
   */
  async sample(schema: string, seed: number): Promise<{ sample: string } | { problem: string }> {
    const { problem, sample } = await this.run({ schema, seed });
    return sample !== undefined ? { sample } : { problem: problem ?? 'no sample was made' };
  }

  private run(task: SchemaTask): Promise<TaskAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const checker of this.checkers) {
      if (!checker.ready || checker.running) continue;
      const job = this.queue.shift();
      if (job) this.send(checker, job);
      // A checker at work (or starting for work) holds the process open; an idle one does not.
      else checker.worker.unref();
    }
    const starting = [...this.checkers].filter((checker) => !checker.ready).length;
    if (this.queue.length > starting && this.checkers.size < this.limits.checkers) this.spawn();
  }

  private send(checker: Checker, job: Job): void {
    const id = ++this.lastId;
    // A check compiles its schema first when the checker has not yet: that gets the compile's
    // time, and the check's own limit starts when the checker says it is checking.
    const timer = this.overrunAfter(checker, this.limits.compileMs);
    checker.running = { id, job, timer };
    checker.worker.ref();
    checker.worker.postMessage({ id, ...job.task });
  }

  private overrunAfter(checker: Checker, ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      const job = checker.running?.job;
      if (!job) return;
      checker.running = undefined;
      job.resolve({ problem: overrun(job.task, ms) });
      void this.end(checker, 'overran');
    }, ms);
  }

  private spawn(): void {
    const worker = startChecker();
    const checker: Checker = { worker, ready: false };
    this.checkers.add(checker);
    worker.on('message', (message: CheckerMessage) => this.receive(checker, message));
    worker.on('error', (error) => void this.end(checker, error.message));
    worker.on('exit', (code) => void this.end(checker, `the thread exited with code ${code}`));
  }

  private receive(checker: Checker, message: CheckerMessage): void {
    if ('ready' in message) {
      checker.ready = true;
      return this.dispatch();
    }
    const running = checker.running;
    if (running?.id !== message.id) return;
    clearTimeout(running.timer);
    if ('checking' in message) {
      const { seed } = running.job.task;
      running.timer = this.overrunAfter(
        checker,
        seed === undefined ? this.limits.checkMs : this.limits.sampleMs,
      );
      return;
    }
    checker.running = undefined;
    running.job.resolve({ problem: message.problem, sample: message.sample });
    this.dispatch();
  }

  /** Takes a checker out of service (overran or crashed) and ends it. */
  private async end(checker: Checker, why: string): Promise<void> {
    if (!this.checkers.delete(checker)) return;
    const running = checker.running;
    checker.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.job.resolve({ problem: `the check stopped: ${why}` });
    }
    if (!checker.ready) {
      // A checker that cannot even start would fail its replacements the same way.
      for (const job of this.queue.splice(0)) {
        job.reject(new Error(`a schema thread could not start: ${why}`));
      }
    } else {
      this.dispatch();
    }
    await checker.worker.terminate();
  }
}

/** Why a task that overran its time limit has no answer. */
function overrun(task: SchemaTask, ms: number): string {
  if (task.seed !== undefined) return `making a sample reply did not finish within ${ms} ms`;
  if (task.reply !== undefined) {
    return `the check of the reply against the schema did not finish within ${ms} ms`;
  }
  return `compiling it took longer than ${ms / 1000} s`;
}

/**
 * The checker runs the file beside this one: compiled JavaScript, or TypeScript through tsx. It
 * takes none of the process's node flags: preloaded modules (`--import`) are not for it.
 */
function startChecker(): Worker {
  const extension = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./pooled-checker${extension}`, import.meta.url);
  const options = { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: CHECKER_HEAP_MB } };
  if (extension !== '.ts') return new Worker(entry, options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = `import(${tsx}).then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(source, { ...options, eval: true });
}

/** The process's reply-schema checkers, started when first needed. */
export const replySchemas = new CheckerPool();
