import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { storedForm } from '../secrets/secret-values.js';
import type { AlertState, NotificationState } from './alert-states.js';
import type { StoredNotify } from './notify-destination.js';
import type { AlertCondition } from './alert-schemas.js';

export interface AlertRow {
  id: string;
  workspace_id: string;
  name: string;
  condition: AlertCondition;
  /** With its `url` opened (stored apart, in `notify_url`, sealed when it holds a secret). */
  notify: StoredNotify;
  /** Whether the notify's secret is stored; the secret itself is read only for sending. */
  notify_secret_set: boolean;
  enabled: boolean;
  /** Seconds a condition must hold (or stop holding) at every check before the state turns. */
  for_s: number;
  state: AlertState;
  since: Date | null;
  last_value: number | null;
}

export interface AlertChangeRow {
  id: string;
  alert_id: string;
  state: AlertState;
  value: number | null;
  changed_at: Date;
  notification: NotificationState;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
}

/** The columns of an alert row, of the table named `a` in the statement. */
const COLUMNS = `a.id::text, a.workspace_id::text, a.name, a.condition, a.notify, a.notify_url,
  a.notify_secret is not null as notify_secret_set, a.enabled, a.for_s, a.state, a.since, a.last_value`;

/** A row as read: the notify's URL apart, as stored. */
export type StoredRow<Row extends AlertRow> = Row & { notify_url: string | null };

/** The row with its notify whole: the URL kept apart put back, opened. */
export function withNotifyUrl<Row extends AlertRow>(
  secrets: SecretBox,
  stored: StoredRow<Row>,
): Row {
  const url = stored.notify_url;
  return url === null
    ? stored
    : { ...stored, notify: { ...stored.notify, url: secrets.open(url) } };
}

/** The notify document as stored (its URL apart) and the URL as stored. */
function notifyColumns(
  secrets: SecretBox,
  notify: StoredNotify | undefined,
): [string | null, string | null] {
  if (!notify) return [null, null];
  const { url, ...rest } = notify;
  return [JSON.stringify(rest), storedForm(secrets, 'url', url)];
}

/** An alert as its notification is sent: its notify's secret (sealed) and its workspace's name. */
export interface AlertToNotify extends AlertRow {
  notify_secret: string | null;
  workspace_name: string;
}

/** What an insert or update writes: the notify as stored, its secret sealed. */
export interface AlertWrite {
  name?: string;
  condition?: AlertCondition;
  notify?: StoredNotify;
  /** Sealed; with `notify`, null clears it and undefined keeps the stored one. */
  notifySecret?: string | null;
  enabled?: boolean;
  for_s?: number;
}

export async function listAlerts(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
): Promise<AlertRow[]> {
  const { rows } = await db.query<StoredRow<AlertRow>>(
    `select ${COLUMNS} from alerts a where a.workspace_id = $1 order by a.id`,
    [workspaceId],
  );
  return rows.map((row) => withNotifyUrl(secrets, row));
}

export async function findAlert(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
): Promise<AlertRow | undefined> {
  const { rows } = await db.query<StoredRow<AlertRow>>(
    `select ${COLUMNS} from alerts a where a.workspace_id = $1 and a.id = $2`,
    [workspaceId, id],
  );
  return rows[0] && withNotifyUrl(secrets, rows[0]);
}

/**
 * The alerts of these ids, whatever their workspace (the notifications being sent), their
 * notify's URL as stored: it is opened with the secret, when each is sent (`withNotifyUrl`).
 */
export async function alertsByIds(
  db: Queryable,
  ids: string[],
): Promise<Map<string, StoredRow<AlertToNotify>>> {
  const { rows } = await db.query<StoredRow<AlertToNotify>>(
    `select ${COLUMNS}, a.notify_secret, w.name as workspace_name
     from alerts a join workspaces w on w.id = a.workspace_id
     where a.id = any($1::bigint[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** One alert of the workspace as its notification is sent (a test). */
export async function findAlertToNotify(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<StoredRow<AlertToNotify> | undefined> {
  const { rows } = await db.query<StoredRow<AlertToNotify>>(
    `select ${COLUMNS}, a.notify_secret, w.name as workspace_name
     from alerts a join workspaces w on w.id = a.workspace_id
     where a.workspace_id = $1 and a.id = $2`,
    [workspaceId, id],
  );
  return rows[0];
}

export async function insertAlert(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  input: Required<Pick<AlertWrite, 'name' | 'condition' | 'notify'>> & AlertWrite,
): Promise<AlertRow> {
  const [notify, notifyUrl] = notifyColumns(secrets, input.notify);
  const { rows } = await db.query<StoredRow<AlertRow>>(
    `insert into alerts as a (workspace_id, name, condition, notify, notify_url, notify_secret,
                              enabled, for_s)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${COLUMNS}`,
    [
      workspaceId,
      input.name,
      JSON.stringify(input.condition),
      notify,
      notifyUrl,
      input.notifySecret ?? null,
      input.enabled ?? true,
      input.for_s ?? 0,
    ],
  );
  return withNotifyUrl(secrets, rows[0] as StoredRow<AlertRow>);
}

/**
 * Applies the members given. A new condition starts the alert afresh (`ok`, no `since`): what
 * it measured before says nothing about the new one. A new condition, or turning it off or on,
 * also forgets a turn under way: the checks it rested on were of another rule, or not made.
 */
export async function updateAlert(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  changes: AlertWrite,
): Promise<AlertRow | undefined> {
  const condition = changes.condition ? JSON.stringify(changes.condition) : null;
  const [notify, notifyUrl] = notifyColumns(secrets, changes.notify);
  const { rows } = await db.query<StoredRow<AlertRow>>(
    `update alerts a set
       name = coalesce($3, name),
       condition = coalesce($4::jsonb, condition),
       notify = coalesce($5::jsonb, notify),
       notify_url = case when $5::jsonb is null then notify_url else $9::text end,
       notify_secret = case when $7 then $8 else notify_secret end,
       enabled = coalesce($6, enabled),
       for_s = coalesce($10, for_s),
       turning_since = case when $4::jsonb is null and $6::boolean is null then turning_since end,
       state = case when $4::jsonb is null then state else 'ok' end,
       since = case when $4::jsonb is null then since end,
       last_value = case when $4::jsonb is null then last_value end,
       updated_at = now()
     where workspace_id = $1 and id = $2
     returning ${COLUMNS}`,
    [
      workspaceId,
      id,
      changes.name ?? null,
      condition,
      notify,
      changes.enabled ?? null,
      changes.notifySecret !== undefined,
      changes.notifySecret ?? null,
      notifyUrl,
      changes.for_s ?? null,
    ],
  );
  return rows[0] && withNotifyUrl(secrets, rows[0]);
}

export async function deleteAlert(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(`delete from alerts where workspace_id = $1 and id = $2`, [
    workspaceId,
    id,
  ]);
  return rowCount > 0;
}

/** The latest changes of each of the workspace's alerts, newest first (`perAlert` each). */
export async function recentChanges(
  db: Queryable,
  workspaceId: string,
  perAlert: number,
): Promise<AlertChangeRow[]> {
  const { rows } = await db.query<AlertChangeRow>(
    `select ch.id::text, ch.alert_id::text, ch.state, ch.value, ch.changed_at, ch.notification,
            ch.attempts, ch.last_error, ch.sent_at
     from alerts a
     cross join lateral (
       select * from alert_changes c where c.alert_id = a.id order by c.id desc limit $2
     ) ch
     where a.workspace_id = $1
     order by ch.id desc`,
    [workspaceId, perAlert],
  );
  return rows;
}

/** Whether the channel is one of the workspace's (alive). */
export async function channelExists(
  db: Queryable,
  workspaceId: string,
  channelId: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `select 1 from channels where workspace_id = $1 and id = $2 and deleted_at is null`,
    [workspaceId, channelId],
  );
  return rows.length > 0;
}

/** The workspace's alert secret, made now (from `fresh`) if it has none yet. */
export async function ensureAlertSecret(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  fresh: string,
): Promise<string | undefined> {
  // Writes only when there is no secret yet; the select sees the row as it was before.
  const { rows } = await db.query<{ alert_secret: string | null }>(
    `with made as (
       update workspaces set alert_secret = $2
       where id = $1 and alert_secret is null
       returning alert_secret
     )
     select coalesce((select alert_secret from made), alert_secret) as alert_secret
     from workspaces where id = $1`,
    [workspaceId, secrets.seal(fresh)],
  );
  const stored = rows[0]?.alert_secret;
  return stored ? secrets.open(stored) : undefined;
}

/** How many enabled alerts are firing, over every workspace (`hookprompt_alerts_firing`). */
export async function countFiring(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ firing: number }>(
    `select count(*)::int as firing from alerts where enabled and state = 'firing'`,
  );
  return rows[0]?.firing ?? 0;
}
