import type { Queryable } from '../db/database.js';
import type { Attachment } from '../attachments/event-attachments.js';

/**
 * Stores what became of an event's images, while this worker still holds it (matched on
 * `locked_by`, as every write of a claimed event is). False when the event was lost meanwhile.
 */
export async function saveAttachments(
  db: Queryable,
  eventId: string,
  workerId: string,
  attachments: readonly Attachment[],
): Promise<boolean> {
  const { rows } = await db.query(
    `update events set attachments = $3::jsonb
     where id = $1 and locked_by = $2 and status = 'processing'
     returning id`,
    [eventId, workerId, JSON.stringify(attachments)],
  );
  return rows.length > 0;
}
