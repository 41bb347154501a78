import type { Condition } from '../conditions/condition-schemas.js';
import type { Queryable } from '../db/database.js';
import type { DestinationKind } from './destination-schemas.js';

export interface DestinationRow {
  id: string;
  channel_id: string;
  kind: DestinationKind;
  enabled: boolean;
  conditions: Condition[];
  message: string;
  /** A `webhook`'s URL as stored: sealed when it holds credentials or a query string. */
  url: string | null;
  fields: Record<string, string>;
  /** Whether a secret is stored; the secret itself is read only for sending. */
  secret_set: boolean;
}

const COLUMNS = `id, channel_id, kind, enabled, conditions, message, url, fields,
  secret is not null as secret_set`;

/** The destinations of these channels, each channel's in its order (its reply URL is not one). */
export async function destinationsOfChannels(
  db: Queryable,
  channelIds: readonly string[],
): Promise<DestinationRow[]> {
  if (channelIds.length === 0) return [];
  const { rows } = await db.query<DestinationRow>(
    `select ${COLUMNS} from destinations
     where channel_id = any($1::bigint[]) and role = 'destination'
     order by channel_id, position`,
    [channelIds],
  );
  return rows;
}

/** A destination as written: `url` as stored, `secret` sealed or undefined to keep the stored one. */
export interface DestinationWrite {
  id?: string;
  kind: DestinationKind;
  enabled: boolean;
  conditions: readonly Condition[];
  message: string;
  url: string | null;
  fields: Record<string, string>;
  secret: string | undefined;
}

/**
 * Makes the channel's list these entries, in their order: entries with an id are updated (a
 * secret left undefined is kept), the others created, and the channel's other destinations
 * deleted (their pending messages with them); its reply URL is left as it is. Run inside the
 * caller's transaction.
 */
export async function replaceDestinations(
  db: Queryable,
  channelId: string,
  entries: readonly DestinationWrite[],
): Promise<void> {
  const kept = entries.flatMap((entry) => (entry.id ? [entry.id] : []));
  await db.query(
    `delete from destinations
     where channel_id = $1 and role = 'destination' and not (id = any($2::bigint[]))`,
    [channelId, kept],
  );
  for (const [position, entry] of entries.entries()) {
    const values = [
      channelId,
      position,
      entry.kind,
      entry.enabled,
      JSON.stringify(entry.conditions),
      entry.message,
      entry.url,
      JSON.stringify(entry.fields),
      entry.secret ?? null,
    ];
    if (entry.id)
      await db.query(
        `update destinations set position = $2, kind = $3, enabled = $4, conditions = $5::jsonb,
           message = $6, url = $7, fields = $8::jsonb, secret = coalesce($9, secret),
           updated_at = now()
         where channel_id = $1 and id = $10 and role = 'destination'`,
        [...values, entry.id],
      );
    else
      await db.query(
        `insert into destinations (channel_id, position, kind, enabled, conditions, message, url,
                                   fields, secret)
         values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9)`,
        values,
      );
  }
}

/** A destination with its sealed secret, for sending. */
export interface SendingRow extends DestinationRow {
  secret: string | null;
}

export async function destinationsForSending(
  db: Queryable,
  ids: readonly string[],
): Promise<SendingRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<SendingRow>(
    `select ${COLUMNS}, secret from destinations where id = any($1::bigint[])`,
    [ids],
  );
  return rows;
}

/** What names a destination (destination-label.ts), with its sealed secret: a webhook URL's host. */
export interface LabelRow {
  id: string;
  kind: DestinationKind;
  url: string | null;
  fields: Record<string, string>;
  secret: string | null;
}

/** The destinations of these channels, for their names (removed ones are gone with their messages). */
export async function destinationsToName(
  db: Queryable,
  channelIds: readonly string[],
): Promise<LabelRow[]> {
  if (channelIds.length === 0) return [];
  const { rows } = await db.query<LabelRow>(
    `select id, kind, url, fields, secret from destinations
     where channel_id = any($1::bigint[]) and role = 'destination'`,
    [channelIds],
  );
  return rows;
}
