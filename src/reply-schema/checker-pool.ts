import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SchemaTask, TaskAnswer, ThreadMessage } from './pooled-checker.js';

export interface SchemaThreadLimits {
  /** Threads running at once; more tasks wait in line. */
  threads: number;
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
 * schema takes seconds. Neither can be interrupted on the thread that runs it, so both run on
 * worker threads, which are ended (and replaced) when they overrun; the main thread only waits.
 */
const DEFAULT_LIMITS: SchemaThreadLimits = {
  // A check that overruns keeps its core busy until it is ended: one core stays for the service.
  threads: Math.max(1, Math.min(2, availableParallelism() - 1)),
  compileMs: 5_000,
  checkMs: 250,
  // Samples are the echo stand-in's, made from the channel's own schema, not from what a sender
  // posts: room for a large schema, still bounded.
  sampleMs: 1_000,
};

// A thread's heap holds compiled schemas and one parsed reply (at most a few MB of JSON).
const THREAD_HEAP_MB = 256;

interface Job {
  task: SchemaTask;
  resolve: (answer: TaskAnswer) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  running?: { id: number; job: Job; timer: NodeJS.Timeout };
}

/** Compiles reply schemas and checks replies against them off the main thread, within time limits. */
export class SchemaThreads {
  private readonly threads = new Set<Thread>();
  private readonly queue: Job[] = [];
  private lastId = 0;

  constructor(private readonly limits: SchemaThreadLimits = DEFAULT_LIMITS) {}

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
    for (const thread of this.threads) {
      if (!thread.ready || thread.running) continue;
      const job = this.queue.shift();
      if (job) this.send(thread, job);
      // A thread at work (or starting for work) holds the process open; an idle one does not.
      else thread.worker.unref();
    }
    const starting = [...this.threads].filter((thread) => !thread.ready).length;
    if (this.queue.length > starting && this.threads.size < this.limits.threads) this.spawn();
  }

  private send(thread: Thread, job: Job): void {
    const id = ++this.lastId;
    // A check compiles its schema first when the thread has not yet: that gets the compile's
    // time, and the check's own limit starts when the thread says it is checking.
    const timer = this.overrunAfter(thread, this.limits.compileMs);
    thread.running = { id, job, timer };
    thread.worker.ref();
    thread.worker.postMessage({ id, ...job.task });
  }

  private overrunAfter(thread: Thread, ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      const job = thread.running?.job;
      if (!job) return;
      thread.running = undefined;
      job.resolve({ problem: overrun(job.task, ms) });
      void this.end(thread, 'overran');
    }, ms);
  }

  private spawn(): void {
    const worker = startThread();
    const thread: Thread = { worker, ready: false };
    this.threads.add(thread);
    worker.on('message', (message: ThreadMessage) => this.receive(thread, message));
    worker.on('error', (error) => void this.end(thread, error.message));
    worker.on('exit', (code) => void this.end(thread, `the thread exited with code ${code}`));
  }

  private receive(thread: Thread, message: ThreadMessage): void {
    if ('ready' in message) {
      thread.ready = true;
      return this.dispatch();
    }
    const running = thread.running;
    if (running?.id !== message.id) return;
    clearTimeout(running.timer);
    if ('checking' in message) {
      const { seed } = running.job.task;
      running.timer = this.overrunAfter(
        thread,
        seed === undefined ? this.limits.checkMs : this.limits.sampleMs,
      );
      return;
    }
    thread.running = undefined;
    running.job.resolve({ problem: message.problem, sample: message.sample });
    this.dispatch();
  }

  /** Takes a thread out of service (overran or crashed) and ends it. */
  private async end(thread: Thread, why: string): Promise<void> {
    if (!this.threads.delete(thread)) return;
    const running = thread.running;
    thread.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.job.resolve({ problem: `the check stopped: ${why}` });
    }
    if (!thread.ready) {
      // A thread that cannot even start would fail its replacements the same way.
      for (const job of this.queue.splice(0)) {
        job.reject(new Error(`a schema thread could not start: ${why}`));
      }
    } else {
      this.dispatch();
    }
    await thread.worker.terminate();
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
 * The thread runs the file beside this one: compiled JavaScript, or TypeScript through tsx. It
 * takes none of the process's node flags: preloaded modules (`--import`) are not for it.
 */
function startThread(): Worker {
  const extension = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./pooled-checker${extension}`, import.meta.url);
  const options = { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } };
  if (extension !== '.ts') return new Worker(entry, options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = `import(${tsx}).then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(source, { ...options, eval: true });
}

/** The process's schema threads, started when first needed. */
export const replySchemas = new SchemaThreads();
