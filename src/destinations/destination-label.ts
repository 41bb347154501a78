import { parsedUrl } from '../secrets/secret-values.js';
import type { DestinationKind } from './destination-schemas.js';

/** The kinds in words, as the panel names them. */
export const KIND_NAMES: Readonly<Record<DestinationKind, string>> = {
  webhook: 'Webhook',
  slack: 'Slack',
  telegram: 'Telegram',
  discord: 'Discord',
  teams: 'Teams',
};

/** What a destination's name is made of: its kind, its non-secret fields and its URL, opened. */
export interface LabelSource {
  kind: DestinationKind;
  fields: Readonly<Record<string, unknown>>;
  /**
   * The URL it posts to, opened: a `webhook`'s URL, or the webhook URL of Slack (without a
   * channel), Discord or Teams. Only its host is ever shown: a chat platform's webhook URL is a
   * secret whole (its path holds the token) and a webhook's may hold a secret query.
   */
  url?: string | null;
}

/**
 * A destination named by where it goes, never by its id (`Slack #3` read like a Slack channel):
 * `Slack #alerts`, `Telegram chat -1001234`, `Discord discord.com`, `Webhook hooks.example.com`.
 * A kind whose place is unknown (no URL stored) is named by its kind alone.
 */
export function destinationLabel(source: LabelSource): string {
  const kind = KIND_NAMES[source.kind] ?? source.kind;
  const where = placeOf(source);
  return where ? `${kind} ${where}` : kind;
}

function placeOf({ kind, fields, url }: LabelSource): string | undefined {
  const field = (name: string) => {
    const value = fields[name];
    return typeof value === 'string' && value.trim() ? value.trim() : undefined;
  };
  if (kind === 'telegram') {
    const chat = field('chat_id');
    return chat && `chat ${chat}`;
  }
  const channel = kind === 'slack' ? field('channel') : undefined;
  if (channel) return `#${channel.replace(/^#/, '')}`;
  return (url && parsedUrl(url)?.host) || undefined;
}
