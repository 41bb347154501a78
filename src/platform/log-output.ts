import type { Writable } from 'node:stream';

/** How much log output may wait for a slow reader before further lines are dropped. */
export const MAX_WAITING_LOG_CHARS = 4 * 1024 * 1024;
/** A batch this long is written at once, without waiting for the end of the turn. */
const BATCH_CHARS = 64 * 1024;

/**
 * Where the log's lines go: standard output, written without ever holding the process. Node
 * writes a pipe without blocking and queues what the pipe cannot take yet; a reader that stops
 * reading would make that queue grow for ever, and one that goes away makes writes fail. So a
 * line that would queue past `maxWaitingChars`, or that can no longer be written, is dropped
 * and counted instead: the reader loses lines, the service keeps answering.
 * The lines of one turn of the event loop are written together: one write for many requests.
 */
export class LogOutput {
  private batch = '';
  private flushScheduled = false;
  private dropped = 0;
  private broken = false;

  constructor(
    private readonly stream: Writable,
    private readonly maxWaitingChars = MAX_WAITING_LOG_CHARS,
  ) {
    // A reader that has gone away (EPIPE) would otherwise be an uncaught error.
    stream.on('error', () => (this.broken = true));
  }

  write(line: string): void {
    const waiting = this.stream.writableLength + this.batch.length;
    if (this.broken || waiting + line.length > this.maxWaitingChars) {
      this.dropped += 1;
      return;
    }
    this.batch += line;
    if (this.batch.length >= BATCH_CHARS) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
  }

  /** Hands the lines of this turn to the stream; also called when the process exits. */
  readonly flush = (): void => {
    if (this.batch === '' || this.broken) return;
    const text = this.batch;
    this.batch = '';
    this.stream.write(text);
  };

  /** Lines dropped since the process started. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Resolves once every line written so far has reached the reader, or after `ms` at most. */
  drained(ms: number): Promise<void> {
    this.flush();
    if (this.broken || this.stream.writableLength === 0 || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stream.off('drain', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stream.once('drain', done);
    });
  }
}

let standardOutput: LogOutput | undefined;

/** The process's one output to standard output, made on first use. */
export function logToStandardOutput(): LogOutput {
  if (!standardOutput) {
    standardOutput = new LogOutput(process.stdout);
    // The last lines (a deadline passed, a crash) are written if the pipe has room for them.
    process.once('exit', standardOutput.flush);
  }
  return standardOutput;
}
