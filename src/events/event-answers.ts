import type { Queryable } from '../db/database.js';
import { findAnswers, findChannelAnswer, type AnswerRow } from './event-answers-repo.js';
import type { EventWaits } from './event-waits.js';

/** An event as far as its answer goes (its id, status, reply and error). */
export type { AnswerRow } from './event-answers-repo.js';

/** The 200 body of a webhook (and of fetching its reply later): what the sender may act on. */
export interface EventAnswer {
  status: 'received' | 'replied' | 'skipped' | 'failed' | 'filtered';
  event_id: string;
  reply?: string;
  error?: string;
}

/** Not finished yet (or, for a sender, not finished in time). */
export const receivedAnswer = (eventId: string): EventAnswer => ({
  status: 'received',
  event_id: eventId,
});

export function answerOf(row: AnswerRow): EventAnswer {
  switch (row.status) {
    case 'replied':
      return { status: 'replied', event_id: row.id, reply: row.reply ?? '' };
    case 'skipped':
      return { status: 'skipped', event_id: row.id };
    case 'failed':
      return { status: 'failed', event_id: row.id, error: row.error ?? '' };
    case 'filtered':
      // The condition that did not hold is for admins (Brain Logs), not for the sender.
      return { status: 'filtered', event_id: row.id };
    default:
      return receivedAnswer(row.id);
  }
}

/**
 * Answers senders about their events, optionally holding the answer until the event finishes.
 * The receiver uses it for a new event and for fetching a reply later; a duplicate request is
 * answered with its first event the same way.
 */
export class EventAnswers {
  constructor(
    private readonly db: Queryable,
    private readonly waits: EventWaits,
  ) {}

  /**
   * The answer for an event known to exist, as it stands now, or, with `waitMs` > 0, as soon as
   * it finishes (`received` when it does not finish in time, or the process is shutting down).
   */
  async forEvent(eventId: string, waitMs: number): Promise<EventAnswer> {
    if (waitMs > 0) {
      const finished = await this.waits.wait(eventId, waitMs);
      return finished ? answerOf(finished) : receivedAnswer(eventId);
    }
    const [row] = await findAnswers(this.db, [eventId]);
    return row ? answerOf(row) : receivedAnswer(eventId);
  }

  /**
   * The answer for an event of one channel (fetching a reply later), or undefined when the
   * channel has no such event a sender was given: other channels' events and refused requests
   * are not found.
   */
  async inChannel(
    channelId: string,
    eventId: string,
    waitMs: number,
  ): Promise<EventAnswer | undefined> {
    const row = await findChannelAnswer(this.db, channelId, eventId);
    if (!row || row.status === 'rejected') return undefined;
    const answer = answerOf(row);
    if (answer.status !== 'received' || waitMs <= 0) return answer;
    return this.forEvent(eventId, waitMs);
  }

  /** Answers every held request now (`received`); used when the process begins to stop. */
  cutWaitsShort(): void {
    this.waits.cutShort();
  }
}
