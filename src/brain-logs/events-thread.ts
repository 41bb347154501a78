import type { Queryable } from '../db/database.js';
import type { EventStatus } from '../events/event-states.js';
import { listThreadEvents, listThreadTurns } from './events-thread-repo.js';

/** An event of a thread as the event page lists it. */
export interface ThreadEvent {
  id: string;
  received_at: string;
  status: EventStatus;
  /** The reply's first THREAD_PREVIEW_CHARS characters (and "…" when it goes on), or null. */
  reply: string | null;
  /** The error's start, as the reply's, or null. */
  error: string | null;
}

/** The events of a thread nearest one of them, newest first, and whether it goes on either side. */
export interface ThreadAround {
  events: ThreadEvent[];
  newer: boolean;
  older: boolean;
}

/** An earlier exchange of the thread as the model is sent it: that event's prompt and reply. */
export interface ThreadTurn {
  id: string;
  received_at: string;
  prompt: string;
  reply: string;
}

/** The event page lists this many events of its thread on each side of the event. */
export const THREAD_AROUND = 10;
/** A listed reply is cut to this many characters: enough to tell the events apart. */
export const THREAD_PREVIEW_CHARS = 160;

/** The thread of an event, for its page in Brain Logs. */
export class EventThreads {
  constructor(private readonly db: Queryable) {}

  /** The events of `event`'s thread nearest to it, itself included (see eventThread). */
  around(
    workspaceId: string,
    event: { id: string; channel_id: string; thread_key: string | null },
  ): Promise<ThreadAround | undefined> {
    return eventThread(this.db, workspaceId, event);
  }

  /**
   * The conversation the model is sent before `event`'s prompt: the last `history` replied events
   * of its thread received before it, oldest first (the channel's History setting; none when 0).
   * The worker may have sent fewer when the input limit left out the oldest (the event then says
   * its input was truncated).
   */
  async turnsBefore(
    workspaceId: string,
    event: { id: string; channel_id: string; thread_key: string | null },
    history: number,
  ): Promise<ThreadTurn[]> {
    if (event.thread_key === null || history <= 0) return [];
    const rows = await listThreadTurns(this.db, {
      workspaceId,
      channelId: event.channel_id,
      threadKey: event.thread_key,
      beforeId: event.id,
      limit: history,
    });
    return rows.map((row) => ({ ...row, received_at: new Date(row.received_at).toISOString() }));
  }
}

/**
 * The events of `event`'s thread nearest to it, itself included, newest first: up to `around`
 * on each side, so an old event of a long thread is shown among its neighbours, not the newest
 * ones. Undefined for an event in no thread.
 */
export async function eventThread(
  db: Queryable,
  workspaceId: string,
  event: { id: string; channel_id: string; thread_key: string | null },
  around = THREAD_AROUND,
): Promise<ThreadAround | undefined> {
  if (event.thread_key === null) return undefined;
  // One more event on each side than shown, and one more character, tell what goes on.
  const rows = await listThreadEvents(db, {
    workspaceId,
    channelId: event.channel_id,
    threadKey: event.thread_key,
    aroundId: event.id,
    newer: around + 1,
    older: around + 2,
    chars: THREAD_PREVIEW_CHARS + 1,
  });
  const id = BigInt(event.id);
  const newer = rows.filter((row) => BigInt(row.id) > id);
  const older = rows.filter((row) => BigInt(row.id) <= id);
  // Newest first: the newer events nearest this one are the last of theirs.
  const shown = [...newer.slice(Math.max(0, newer.length - around)), ...older.slice(0, around + 1)];
  return {
    events: shown.map((row) => ({
      id: row.id,
      received_at: new Date(row.received_at).toISOString(),
      status: row.status as EventStatus,
      reply: start(row.reply),
      error: start(row.error),
    })),
    newer: newer.length > around,
    older: older.length > around + 1,
  };
}

function start(text: string | null): string | null {
  return text !== null && text.length > THREAD_PREVIEW_CHARS
    ? `${text.slice(0, THREAD_PREVIEW_CHARS)}…`
    : text;
}
