import type { Request, Response } from 'express';
import { eventErrors } from './event-errors.js';
import type { EventsFeed } from './events-feed.js';
import type { EventRow } from '../events/event-row.js';
import type { EventConditions } from './events-where.js';

/** More than this waiting for a client means it has stopped reading: its stream is ended. */
export const STREAM_BACKLOG_BYTES = 1024 * 1024;
/**
 * How long a client whose backlog is full gets to take some of it before its stream is ended:
 * a reader on a slow link catches up, one that stopped reading is let go (a browser's
 * EventSource reconnects and resumes from the last message it read).
 */
export const STREAM_STALL_MS = 2_000;
const HEARTBEAT_MS = 15_000;
const LAST_EVENT_ID = /^\d{1,19}$/;

export interface LiveStreamRequest {
  /** Whose stream it is (an API key, a panel session): each holds at most STREAMS_PER_KEY. */
  owner: string;
  conditions: EventConditions;
  /** The `data` of the message about one stored or changed event. */
  message: (row: EventRow) => unknown;
}

/**
 * The live tails of Brain Logs (`/api/v1/events/stream` and the panel's) as Server-Sent Events:
 * how many one owner holds, and what a client that does not read may cost. Counted per process:
 * what a stream holds (its buffer, its reads) is this process's, wherever its owner's others are.
 */
export class LiveStreams {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly feed: EventsFeed,
    private readonly perOwner: number,
  ) {}

  /**
   * Answers `req` with the stream of `stream.conditions` until the client leaves or the process
   * stops.
   * @throws AppError 429 `too_many_streams` when the owner already holds STREAMS_PER_KEY.
   */
  async serve(req: Request, res: Response, stream: LiveStreamRequest): Promise<void> {
    const release = this.take(stream.owner);
    res.on('close', release);
    // The head goes out once the subscription is in place (or with its first message): a client
    // that sees the stream open and then stores an event must get that event.
    const open = () => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
        // Proxies such as nginx would otherwise hold messages back.
        'X-Accel-Buffering': 'no',
      });
      res.write('retry: 3000\n\n');
    };
    const lastId = req.get('Last-Event-ID')?.trim();
    const unsubscribe = await this.feed.subscribe(
      stream.conditions,
      lastId && LAST_EVENT_ID.test(lastId) ? lastId : undefined,
      async (row) => {
        const data = JSON.stringify(await stream.message(row));
        open();
        await send(res, `id: ${row.change_seq}\nevent: event\ndata: ${data}\n\n`);
      },
      () => res.end(),
    );
    open();
    // A heartbeat adds nothing to a backlog: the client has not read what came before it.
    const heartbeat = setInterval(() => {
      if (!res.writableNeedDrain) res.write(': heartbeat\n\n');
    }, HEARTBEAT_MS);
    const stop = () => {
      clearInterval(heartbeat);
      unsubscribe();
    };
    if (res.closed) stop();
    else res.on('close', stop);
  }

  /** How many streams `owner` holds now. */
  holding(owner: string): number {
    return this.held.get(owner) ?? 0;
  }

  private take(owner: string): () => void {
    const count = this.holding(owner);
    if (count >= this.perOwner) throw eventErrors.tooManyStreams(this.perOwner);
    this.held.set(owner, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.holding(owner) - 1;
      if (left > 0) this.held.set(owner, left);
      else this.held.delete(owner);
    };
  }
}

/**
 * Writes one message. When what was written before still waits and this one would take the
 * backlog past STREAM_BACKLOG_BYTES, the feed waits (reading nothing more for this stream) until
 * the client takes it, or ends the stream after STREAM_STALL_MS. A single message larger than
 * the limit still goes to a client that reads.
 */
async function send(res: Response, message: string): Promise<void> {
  if (res.destroyed) return;
  const backlog = () => res.writableLength + Buffer.byteLength(message);
  if (res.writableNeedDrain && backlog() > STREAM_BACKLOG_BYTES) {
    if (!(await drained(res, STREAM_STALL_MS))) {
      res.destroy();
      return;
    }
  }
  res.write(message);
}

/** True once `res` has written out what waited; false if it closed or `ms` passed first. */
function drained(res: Response, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (result: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(result);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}
