/**
 * Every column that holds a secret the service must read back (and so cannot keep as a hash).
 * Each room reads and writes its own through the SecretBox; start-up seals what was stored before
 * there was a key, and `npm run admin -- rotate-secrets` seals all of them again, from this list.
 * A new secret column is one line here. Rows are found by their `id`.
 */
export const SECRET_COLUMNS = [
  { table: 'channels', column: 'verification_secret' },
  { table: 'channels', column: 'reply_secret' },
  { table: 'channels', column: 'reply_previous_secret' },
  { table: 'providers', column: 'api_key' },
  { table: 'workspaces', column: 'alert_secret' },
  { table: 'alerts', column: 'notify_secret' },
  { table: 'destinations', column: 'secret' },
] as const satisfies readonly SecretColumn[];

export interface SecretColumn {
  table: string;
  column: string;
}

/** How a column is named in messages: `channels.reply_secret`. */
export const columnName = ({ table, column }: SecretColumn) => `${table}.${column}`;
