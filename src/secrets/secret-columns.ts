import type { SecretKind } from './secret-values.js';

/**
 * Every column that holds a secret the service must read back (and so cannot keep as a hash),
 * with the kind of value it holds (secret-values.ts): a `value` column is sealed whole, a `url`
 * column holds URLs sealed when they hold credentials or a query string. Each room reads and
 * writes its own through the SecretBox; start-up seals what was stored before there was a key,
 * and `npm run admin -- rotate-secrets` seals all of them again, from this list. A new secret
 * column is one line here. Rows are found by their `id`.
 */
export const SECRET_COLUMNS = [
  { table: 'channels', column: 'verification_secret', kind: 'value' },
  { table: 'channels', column: 'reply_secret', kind: 'value' },
  { table: 'channels', column: 'reply_previous_secret', kind: 'value' },
  { table: 'providers', column: 'api_key', kind: 'value' },
  { table: 'workspaces', column: 'alert_secret', kind: 'value' },
  { table: 'alerts', column: 'notify_secret', kind: 'value' },
  { table: 'destinations', column: 'secret', kind: 'value' },
  // Requests are looked up by its hash (webhook_token_hash); it is kept to show the URL.
  { table: 'channels', column: 'webhook_token', kind: 'value' },
  // A `webhook` destination's URL, and the channel's reply URL (its row of role `reply_url`).
  { table: 'destinations', column: 'url', kind: 'url' },
  { table: 'alerts', column: 'notify_url', kind: 'url' },
  // A tool's headers, one JSON object sealed whole; its URL (`http` and `mcp`).
  { table: 'tools', column: 'headers', kind: 'value' },
  { table: 'tools', column: 'url', kind: 'url' },
] as const satisfies readonly SecretColumn[];

export interface SecretColumn {
  table: string;
  column: string;
  kind: SecretKind;
}

/** How a column is named in messages: `channels.reply_secret`. */
export const columnName = ({ table, column }: Pick<SecretColumn, 'table' | 'column'>) =>
  `${table}.${column}`;
