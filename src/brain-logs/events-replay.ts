import { recordAudit } from '../audit/record-audit.js';
import type { Database, Queryable } from '../db/database.js';
import { notFound } from '../platform/errors.js';
import { isJsonObject, parsePayload } from '../template/index.js';
import type { WorkspacesService } from '../workspaces/workspaces-service.js';
import { eventErrors } from './event-errors.js';
import { REPLAY_FROM, UNFINISHED_STATUSES } from '../events/event-states.js';
import { lockEvent, requeueEvents } from './events-replay-repo.js';
import { scanEvents } from './events-scan.js';
import type { EventJson } from '../events/event-object.js';
import type { EventReader } from './event-reader.js';
import { filterConditions, type EventFilter } from './events-filter.js';
import type { EventConditions } from './events-where.js';

const BATCH = 1000;

/**
 * Replay: a finished event asked again, rendered with its channel's template as it is now, for
 * one chat of the quota each; the outcome it had is kept in its `history`.
 */
export class EventsReplay {
  constructor(
    private readonly db: Database,
    private readonly reader: EventReader,
    private readonly workspaces: WorkspacesService,
  ) {}

  /**
   * @throws AppError 404 unknown event, 409 `event_unfinished` while it waits for its reply,
   *   409 `event_not_replayable` for a refused request without a complete object body or a
   *   filtered one cut to its first 64 KB,
   *   403 `quota_exceeded` when the month's chats are used up.
   */
  async replayOne(workspaceId: string, id: string): Promise<EventJson> {
    const paid = await this.db.transaction(async (tx) => {
      const event = await lockEvent(tx, workspaceId, id);
      if (!event) throw notFound('This event');
      if ((UNFINISHED_STATUSES as readonly string[]).includes(event.status)) {
        throw eventErrors.unfinished();
      }
      if (!isReplayable(event)) throw eventErrors.notReplayable();
      if (!(await this.workspaces.takeChats(workspaceId, 1, tx))) return false;
      await requeueEvents(tx, workspaceId, [id], REPLAY_FROM);
      await recordAudit(tx, {
        workspaceId,
        action: 'event.replay',
        target: { kind: 'event', id },
        changes: { status: { before: event.status, after: 'pending' } },
      });
      return true;
    });
    if (!paid) throw await this.quotaError(workspaceId);
    return this.reader.get(workspaceId, id);
  }

  /**
   * Every replayable event of the filter (finished ones; refused requests only with a complete
   * object body), all or none: either the quota has room for all of them, or none is replayed.
   * With `dryRun`, only counts them.
   * @throws AppError 403 `quota_exceeded` when the quota cannot pay for all of them.
   */
  async replayMatching(
    workspaceId: string,
    filter: EventFilter,
    dryRun: boolean,
  ): Promise<{ count: number }> {
    const conditions = filterConditions(workspaceId, filter);
    if (dryRun) return { count: (await replayableIds(this.db, conditions)).length };
    const count = await this.db.transaction(async (tx) => {
      const ids = await replayableIds(tx, conditions);
      if (ids.length === 0) return 0;
      if (!(await this.workspaces.takeChats(workspaceId, ids.length, tx))) return undefined;
      let replayed = 0;
      for (let i = 0; i < ids.length; i += BATCH) {
        const batch = ids.slice(i, i + BATCH);
        replayed += (await requeueEvents(tx, workspaceId, batch, REPLAY_FROM)).length;
      }
      // A concurrent replay took some first: their chats go back.
      if (replayed < ids.length) {
        await this.workspaces.takeChats(workspaceId, replayed - ids.length, tx);
      }
      await recordAudit(tx, {
        workspaceId,
        action: 'event.replay_bulk',
        target: { kind: 'event', id: null },
        changes: { filter, count: replayed },
      });
      return replayed;
    });
    if (count === undefined) throw await this.quotaError(workspaceId);
    return { count };
  }

  /** Read after the transaction: on the embedded database a read beside it would wait for it. */
  private async quotaError(workspaceId: string) {
    return eventErrors.quotaExceeded(await this.workspaces.get(workspaceId));
  }
}

async function replayableIds(db: Queryable, conditions: EventConditions): Promise<string[]> {
  const ids: string[] = [];
  for await (const row of scanEvents(db, conditions, { batchSize: BATCH })) {
    if ((UNFINISHED_STATUSES as readonly string[]).includes(row.status)) continue;
    if (!isReplayable(row)) continue;
    ids.push(row.id);
  }
  return ids;
}

/**
 * A finished event is replayable unless its body is not a whole JSON object: a filtered one cut
 * to its first 64 KB, a refused one that is not an object or was cut short.
 */
function isReplayable(event: { status: string; payload: string; payload_truncated: boolean }) {
  if (event.status === 'filtered') return !event.payload_truncated;
  return event.status !== 'rejected' || isCompleteObject(event.payload);
}

function isCompleteObject(payload: string): boolean {
  try {
    return isJsonObject(parsePayload(payload));
  } catch {
    return false;
  }
}
