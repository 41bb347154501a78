import { CHANGED, recordAudit } from '../audit/record-audit.js';
import type { Condition } from '../conditions/condition-schemas.js';
import type { Database, Queryable } from '../db/database.js';
import { whyUnreachable } from '../outbound/address-guard.js';
import { invalidField, notFound } from '../platform/errors.js';
import { newSigningSecret } from '../platform/secrets.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { keptUrl, shownUrl, storedForm } from '../secrets/secret-values.js';
import {
  DEFAULT_MESSAGE,
  DEFAULT_WHEN,
  FIELD_NAMES,
  hasSecret,
  secretOf,
  settingsOf,
  type DestinationInput,
  type DestinationKind,
  type DestinationSettings,
} from './destination-schemas.js';
import { destinationLabel } from './destination-label.js';
import * as repo from './destinations-repo.js';
import * as replyUrl from './reply-url-repo.js';

/**
 * A destination as the API shows it: secrets only as `token_set` / `url_set`, a `webhook`'s URL
 * without its password.
 */
export interface DestinationJson {
  id: string;
  kind: DestinationKind;
  enabled: boolean;
  when: Condition[];
  message: string;
  url?: string;
  url_set?: boolean;
  token_set?: boolean;
  [field: string]: unknown;
}

/** A channel's `reply_delivery` as the API shows it: the URL without its password. */
export interface ReplyDelivery {
  url: string | null;
  enabled: boolean;
  /** Why delivery was turned off automatically (the receiver answered 410), else null. */
  disabled_reason: string | null;
}

/** A change of `reply_delivery`: `url` undefined leaves the URL, null removes it. */
export interface ReplyDeliveryChange {
  url?: string | null;
  enabled?: boolean;
}

/** A channel that never had a reply URL: none, and delivery on for the one it gets. */
const NO_REPLY_URL: ReplyDelivery = { url: null, enabled: true, disabled_reason: null };

/** How long a replaced reply secret keeps signing messages next to the new one. */
export const ROTATION_OVERLAP_HOURS = 24;

/**
 * A target ready for the delivery queue, its secret opened: a destination, or the channel's
 * reply URL (a `webhook` of role `reply`, with no id, no `when` and no message of its own: it
 * sends the Standard Webhooks body alone).
 */
export interface DestinationToSend {
  id: string | null;
  role: 'reply' | 'destination';
  kind: DestinationKind;
  when: Condition[];
  /** Rendered over the event; null: the webhook body alone. */
  message: string | null;
  settings: DestinationSettings;
}

/** The channel's reply URL (opened) as a target. */
export const replyUrlTarget = (url: string): DestinationToSend => ({
  id: null,
  role: 'reply',
  kind: 'webhook',
  when: [],
  message: null,
  settings: { kind: 'webhook', url, fields: {}, replyUrl: true },
});

/** A channel's `destinations`: checked, stored with their secrets sealed, shown without them. */
export class DestinationsService {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    /** DELIVERY_ALLOW_PRIVATE: URLs given in the API may reach loopback and private addresses. */
    private readonly allowPrivate: boolean,
  ) {}

  /**
   * Refuses, before anything is written, a URL that leads to this host or its private network
   * (as for reply_delivery), checked again at every connection.
   */
  async checkUrls(inputs: readonly DestinationInput[]): Promise<void> {
    for (const [index, input] of inputs.entries()) {
      const [field, url] =
        input.kind === 'webhook'
          ? ['url', input.url]
          : ['webhook_url', 'webhook_url' in input ? input.webhook_url : undefined];
      if (!url) continue;
      const refused = await whyUnreachable(new URL(url), {
        allowPrivate: this.allowPrivate,
        setting: 'DELIVERY_ALLOW_PRIVATE',
      });
      if (refused) invalid(`destinations.${index}.${field}`, `refused: ${refused}`);
    }
  }

  /**
   * Replaces the channel's list, on `db` (the caller's transaction). An entry sent with its id
   * and no secret keeps the stored one, as long as it stays the same kind (and, for Slack, the
   * same way of posting); any other entry of a kind with a secret must bring one. A `webhook`
   * sent with its id and its URL as read back keeps the URL's stored password.
   */
  async replace(
    db: Queryable,
    channelId: string,
    inputs: readonly DestinationInput[],
  ): Promise<void> {
    const stored = new Map(
      (await repo.destinationsOfChannels(db, [channelId])).map((row) => [row.id, row]),
    );
    const writes = inputs.map((input, index): repo.DestinationWrite => {
      const before = input.id === undefined ? undefined : stored.get(input.id);
      if (input.id !== undefined && !before)
        invalid(`destinations.${index}.id`, 'is not a destination of this channel');
      const secret = secretOf(input);
      if (hasSecret(input.kind) && secret === undefined && !keepsSecret(input, before))
        invalid(`destinations.${index}`, `needs its ${secretName(input)}`);
      const settings = settingsOf(input);
      const url =
        settings.url && keptUrl(settings.url, before?.url && this.secrets.open(before.url));
      return {
        id: input.id,
        kind: input.kind,
        enabled: input.enabled ?? true,
        conditions: input.when ?? DEFAULT_WHEN,
        message: input.message ?? DEFAULT_MESSAGE,
        url: storedForm(this.secrets, 'url', url),
        fields: { ...settings.fields },
        secret: secret === undefined ? undefined : this.secrets.seal(secret),
      };
    });
    await repo.replaceDestinations(db, channelId, writes);
  }

  /** The destinations of each of these channels, as the API shows them. */
  async ofChannels(channelIds: readonly string[]): Promise<Map<string, DestinationJson[]>> {
    const rows = await repo.destinationsOfChannels(this.db, channelIds);
    const byChannel = new Map<string, DestinationJson[]>(channelIds.map((id) => [id, []]));
    for (const row of rows)
      byChannel.get(row.channel_id)?.push(toJson(row, row.url && this.secrets.open(row.url)));
    return byChannel;
  }

  /**
   * The name of each destination of these channels, by id (destination-label.ts). A chat
   * platform's webhook URL is opened only to take its host; a bot token is never opened.
   */
  async labels(channelIds: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(channelIds)];
    const rows = await repo.destinationsToName(this.db, unique);
    return new Map(
      rows.map((row) => {
        const postsToWebhookUrl =
          row.kind === 'discord' ||
          row.kind === 'teams' ||
          (row.kind === 'slack' && slackMode(row.fields) === 'webhook_url');
        const stored = row.kind === 'webhook' ? row.url : postsToWebhookUrl ? row.secret : null;
        const url = stored && this.secrets.open(stored);
        return [row.id, destinationLabel({ kind: row.kind, fields: row.fields, url })];
      }),
    );
  }

  /** The `reply_delivery` of each of these channels. */
  async replyDeliveries(channelIds: readonly string[]): Promise<Map<string, ReplyDelivery>> {
    const rows = await replyUrl.replyUrlsOfChannels(this.db, channelIds);
    const byChannel = new Map(channelIds.map((id) => [id, { ...NO_REPLY_URL }]));
    for (const row of rows)
      byChannel.set(row.channel_id, {
        url: row.url === null ? null : shownUrl(this.secrets.open(row.url)),
        enabled: row.enabled,
        disabled_reason: row.disabled_reason,
      });
    return byChannel;
  }

  /**
   * Writes a change of the channel's `reply_delivery`, on `db` (the caller's transaction). The
   * URL was checked by the caller; given as read back (without its password), it keeps the
   * stored one.
   */
  async writeReplyDelivery(
    db: Queryable,
    channelId: string,
    change: ReplyDeliveryChange,
  ): Promise<void> {
    if (change.url === undefined && change.enabled === undefined) return;
    let url = change.url;
    if (url) {
      const stored = await replyUrl.storedReplyUrl(db, channelId);
      url = keptUrl(url, stored && this.secrets.open(stored));
    }
    await replyUrl.writeReplyUrl(db, channelId, {
      url: url === undefined ? undefined : storedForm(this.secrets, 'url', url),
      enabled: change.enabled,
    });
  }

  /** These destinations with their secrets opened, for the delivery queue. */
  async forSending(
    ids: readonly string[],
    db: Queryable = this.db,
  ): Promise<Map<string, DestinationToSend>> {
    const rows = await repo.destinationsForSending(db, ids);
    return new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          role: 'destination',
          kind: row.kind,
          when: row.conditions,
          message: row.message,
          settings: {
            kind: row.kind,
            url: this.secrets.open(row.url),
            secret: this.secrets.open(row.secret),
            fields: row.fields,
          },
        },
      ]),
    );
  }

  /** The reply URL's signing secret (`whsec_...`), made on first use. */
  async replySecret(workspaceId: string, channelId: string): Promise<string> {
    const secret = await replyUrl.ensureReplySecret(
      this.db,
      this.secrets,
      workspaceId,
      channelId,
      newSigningSecret(),
    );
    if (!secret) throw notFound('This channel');
    return secret;
  }

  /** A new signing secret; the previous one keeps signing too for ROTATION_OVERLAP_HOURS. */
  async rotateReplySecret(workspaceId: string, channelId: string): Promise<string> {
    const secret = await this.db.transaction(async (tx) => {
      const rotated = await replyUrl.rotateReplySecret(
        tx,
        this.secrets,
        workspaceId,
        channelId,
        newSigningSecret(),
        ROTATION_OVERLAP_HOURS,
      );
      if (rotated)
        await recordAudit(tx, {
          workspaceId,
          action: 'channel.rotate_reply_secret',
          target: { kind: 'channel', id: channelId },
          changes: { reply_secret: CHANGED },
        });
      return rotated;
    });
    if (!secret) throw notFound('This channel');
    return secret;
  }

  /** The reply URL answered 410 Gone: its delivery goes off, on `db` (the caller's transaction). */
  replyUrlGone(db: Queryable, channelId: string, reason: string): Promise<void> {
    return replyUrl.turnOffReplyUrl(db, channelId, reason);
  }
}

/** Slack posts with a bot token when it has a `channel`, else to an Incoming Webhook. */
const slackMode = (fields: Record<string, unknown>) => (fields.channel ? 'token' : 'webhook_url');

function keepsSecret(input: DestinationInput, before: repo.DestinationRow | undefined): boolean {
  if (!before?.secret_set || before.kind !== input.kind) return false;
  return input.kind !== 'slack' || slackMode(before.fields) === slackMode(input);
}

function secretName(input: DestinationInput): string {
  if (input.kind === 'telegram') return 'bot_token';
  if (input.kind === 'slack' && input.channel) return 'token';
  return 'webhook_url';
}

/** `url`: the row's URL, opened. */
function toJson(row: repo.DestinationRow, url: string | null): DestinationJson {
  const json: DestinationJson = {
    id: row.id,
    kind: row.kind,
    enabled: row.enabled,
    when: row.conditions,
    message: row.message,
  };
  if (row.kind === 'webhook') json.url = url ? shownUrl(url) : undefined;
  else if (row.kind === 'telegram' || (row.kind === 'slack' && row.fields.channel))
    json.token_set = row.secret_set;
  else json.url_set = row.secret_set;
  for (const name of FIELD_NAMES[row.kind]) json[name] = row.fields[name] ?? null;
  return json;
}

function invalid(path: string, message: string): never {
  throw invalidField(path, message);
}
