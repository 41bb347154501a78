import { z } from 'zod';
import { conditionSchema, type Condition } from '../conditions/condition-schemas.js';
import { rowId } from '../platform/ids.js';

/** The kinds of destination, each with one transport in this folder. */
export const DESTINATION_KINDS = ['webhook', 'slack', 'telegram', 'discord', 'teams'] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Most destinations a channel may have. */
export const MAX_DESTINATIONS = 5;

/** A destination's `message` when none is given: the reply as it is. */
export const DEFAULT_MESSAGE = '{{reply}}';

/** A destination's `when` when none is given: replied events only. */
export const DEFAULT_WHEN: readonly Condition[] = [{ path: 'status', op: 'eq', value: 'replied' }];

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2000, 'must be at most 2000 characters long');
/** A field rendered over the payload per event (`{{message.chat.id}}`). */
const fieldTemplate = z.string().max(1_000);
const secretText = z.string().trim().min(1, 'must not be empty').max(1_000);

/** `when`: conditions over `status`, `payload.<p>` and `json.<p>` (the reply parsed). */
export const whenSchema = z.array(conditionSchema(['status', 'payload', 'json'])).max(20);

/**
 * What every kind has. `id` is the server's; an entry sent back with its `id` and without its
 * secret keeps the stored one. `token_set` / `url_set` are read-only and accepted back as read.
 */
const common = {
  id: rowId('must be a destination id').optional(),
  enabled: z.boolean().optional(),
  when: whenSchema.optional(),
  message: z.string().max(10_000).optional(),
  token_set: z.boolean().optional(),
  url_set: z.boolean().optional(),
};

const webhook = z.strictObject({ ...common, kind: z.literal('webhook'), url: httpUrl });
const slack = z
  .strictObject({
    ...common,
    kind: z.literal('slack'),
    /** An Incoming Webhook URL (a secret), or a bot `token` with a `channel`. */
    webhook_url: httpUrl.optional(),
    token: secretText.optional(),
    channel: fieldTemplate.min(1).optional(),
    thread_ts: fieldTemplate.optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.webhook_url !== undefined && (entry.token !== undefined || entry.channel))
      ctx.addIssue({
        code: 'custom',
        path: ['webhook_url'],
        message: 'is used without token and channel',
      });
    if (entry.token !== undefined && !entry.channel)
      ctx.addIssue({ code: 'custom', path: ['channel'], message: 'is needed with a token' });
  });
const telegram = z.strictObject({
  ...common,
  kind: z.literal('telegram'),
  bot_token: secretText.optional(),
  chat_id: fieldTemplate.min(1),
  reply_to: fieldTemplate.optional(),
});
const discord = z.strictObject({
  ...common,
  kind: z.literal('discord'),
  webhook_url: httpUrl.optional(),
  thread_id: fieldTemplate.optional(),
});
const teams = z.strictObject({
  ...common,
  kind: z.literal('teams'),
  webhook_url: httpUrl.optional(),
});

/**
 * One destination as the API (and the alerts of a workspace) take it. Secrets (`token`,
 * `bot_token`, the `webhook_url` of slack, discord and teams) may be left out only by an entry
 * that has an `id` whose stored secret it keeps: see `secretOf` and `needsSecret`.
 */
export const destinationSchema = z.discriminatedUnion('kind', [
  webhook,
  slack,
  telegram,
  discord,
  teams,
]);
export type DestinationInput = z.infer<typeof destinationSchema>;

/** A channel's `destinations`: up to five. */
export const destinationsSchema = z.array(destinationSchema).max(MAX_DESTINATIONS);

/** The one secret of an entry as sent, if it carries one. */
export function secretOf(input: DestinationInput): string | undefined {
  switch (input.kind) {
    case 'webhook':
      return undefined;
    case 'slack':
      return input.webhook_url ?? input.token;
    case 'telegram':
      return input.bot_token;
    default:
      return input.webhook_url;
  }
}

/** Whether the kind keeps a secret (every kind but `webhook`, whose URL is shown). */
export const hasSecret = (kind: DestinationKind) => kind !== 'webhook';

/**
 * A destination ready to send to: its secret opened, its templated fields not yet rendered.
 * `secret` is the bot token (telegram, slack with `channel`) or the webhook URL (slack without
 * `channel`, discord, teams); `url` is the webhook kind's URL.
 */
export interface DestinationSettings {
  kind: DestinationKind;
  secret?: string | null;
  url?: string | null;
  /**
   * The channel's reply URL (a `webhook`): a 410 turns its delivery off, every other answer
   * that is not a 2xx is retried, and a redirect says where it pointed.
   */
  replyUrl?: boolean;
  /** Slack's `channel` and `thread_ts`; Telegram's `chat_id` and `reply_to`; Discord's `thread_id`. */
  fields: Readonly<Record<string, string>>;
}

/** The templated, non-secret fields an entry keeps, by kind. */
export const FIELD_NAMES: Readonly<Record<DestinationKind, readonly string[]>> = {
  webhook: [],
  slack: ['channel', 'thread_ts'],
  telegram: ['chat_id', 'reply_to'],
  discord: ['thread_id'],
  teams: [],
};

/** An entry as sent, with the secret it carries or keeps, as the transports take it. */
export function settingsOf(
  input: DestinationInput,
  keptSecret?: string | null,
): DestinationSettings {
  const fields: Record<string, string> = {};
  const record = input as Record<string, unknown>;
  for (const name of FIELD_NAMES[input.kind]) {
    const value = record[name];
    if (typeof value === 'string' && value !== '') fields[name] = value;
  }
  return {
    kind: input.kind,
    secret: secretOf(input) ?? keptSecret ?? null,
    url: input.kind === 'webhook' ? input.url : null,
    fields,
  };
}
