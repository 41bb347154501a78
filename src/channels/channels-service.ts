import {
  DEFAULT_AI_SETTINGS,
  DEFAULT_PROVIDER,
  mergeAiSettings,
  namedProviders,
  toAiSettings,
  type AiSettings,
} from '../ai/ai-settings.js';
import { CHANGED, changesBetween, recordAudit, type AuditChanges } from '../audit/record-audit.js';
import type { Condition } from '../conditions/condition-schemas.js';
import type { Database, Queryable } from '../db/database.js';
import { notFound, invalidField } from '../platform/errors.js';
import { whyUnreachable } from '../outbound/address-guard.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { DestinationInput } from '../destinations/destination-schemas.js';
import type {
  DestinationJson,
  DestinationsService,
  ReplyDelivery,
} from '../destinations/destinations-service.js';
import { newSigningSecret } from '../platform/secrets.js';
import { channelStats, type ChannelStats } from './channel-stats-repo.js';
import * as repo from './channels-repo.js';
import type { CreateChannel, ReplyDeliveryChange, UpdateChannel } from './channels-schemas.js';
import { NEW_CHANNEL_SENDERS, senderChanges } from './sender-changes.js';
import type { DedupSettings, VerificationScheme } from './sender-settings.js';
import { hashWebhookToken, newWebhookToken } from './webhook-token.js';

export interface Channel {
  id: string;
  name: string;
  enabled: boolean;
  template: string;
  /** Null members mean the server's default. */
  ai: AiSettings;
  webhook_url: string;
  /** How senders prove who they are; the secret is never shown, only whether one is set. */
  verification: {
    scheme: VerificationScheme;
    header?: string;
    encoding?: 'hex' | 'base64';
    tolerance_s?: number;
    secret_set: boolean;
  };
  allowed_ips: string[];
  /** Web pages' origins that may post to the webhook URL from a browser (CORS); ['*'] for any. */
  allowed_origins: string[];
  dedup: DedupSettings;
  /** Where finished events are POSTed (Standard Webhooks, signed with the reply secret). */
  reply_delivery: ReplyDelivery;
  /** Conditions a payload must meet to be answered; others are stored `filtered`. */
  accept_when: Condition[];
  /** The current version of `template` and `ai` (1 at creation). */
  version: number;
  /** Where replies go besides the reply URL: Slack, Telegram, Discord, Teams, webhooks. */
  destinations: DestinationJson[];
  created_at: string;
  updated_at: string;
}

/** A version of a channel's template and AI settings, kept whole. */
export interface ChannelVersion {
  version: number;
  template: string;
  ai: AiSettings;
  created_at: string;
}

export interface ChannelsOptions {
  publicBaseUrl: string;
  /** DELIVERY_ALLOW_PRIVATE: reply URLs may point at loopback and private addresses. */
  allowPrivateReplyUrls: boolean;
  /** Called with the webhook-token hash of a channel whose settings changed. */
  onChanged?: (webhookTokenHash: string) => void;
  /**
   * Refuses provider names the workspace does not have (`unknown_provider`), keeping the named
   * ones from being deleted until the transaction `db` ends.
   */
  requireProviders: (db: Queryable, workspaceId: string, names: string[]) => Promise<void>;
  /**
   * Refuses tool names the workspace does not have (`unknown_tool`), keeping the named ones from
   * being deleted until the transaction `db` ends.
   */
  requireTools: (db: Queryable, workspaceId: string, names: string[]) => Promise<void>;
  /** The channels' `destinations`, checked and kept by their own room. */
  destinations: DestinationsService;
}

/** Channel management for one workspace at a time; used by the API and the panel alike. */
export class ChannelsService {
  constructor(
    private readonly db: Database,
    /** Seals the channels' secrets in the database, and opens them. */
    private readonly secrets: SecretBox,
    private readonly options: ChannelsOptions,
  ) {}

  webhookUrl(token: string): string {
    return `${this.options.publicBaseUrl}/hooks/${token}`;
  }

  /** The channels as the API shows them, each with its reply URL and destinations. */
  private async toChannels(rows: repo.ChannelRow[]): Promise<Channel[]> {
    const ids = rows.map((row) => row.id);
    const [replies, destinations] = await Promise.all([
      this.options.destinations.replyDeliveries(ids),
      this.options.destinations.ofChannels(ids),
    ]);
    return rows.map((row) =>
      this.toChannel(row, replies.get(row.id) as ReplyDelivery, destinations.get(row.id) ?? []),
    );
  }

  private async withDestinations(row: repo.ChannelRow): Promise<Channel> {
    return (await this.toChannels([row]))[0] as Channel;
  }

  private toChannel(
    row: repo.ChannelRow,
    replyDelivery: ReplyDelivery,
    destinations: DestinationJson[],
  ): Channel {
    return {
      id: row.id,
      name: row.name,
      enabled: row.enabled,
      template: row.template,
      ai: toAiSettings(row.ai),
      webhook_url: this.webhookUrl(this.secrets.open(row.webhook_token)),
      verification: { ...row.verification, secret_set: row.secret_set },
      allowed_ips: row.allowed_ips,
      allowed_origins: row.allowed_origins,
      dedup: row.dedup,
      reply_delivery: replyDelivery,
      accept_when: row.accept_when ?? [],
      version: row.version,
      destinations,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }

  async create(workspaceId: string, input: CreateChannel): Promise<Channel> {
    const token = newWebhookToken();
    const ai = mergeAiSettings(DEFAULT_AI_SETTINGS, input.ai);
    const channel: repo.NewChannel = {
      workspaceId,
      name: input.name,
      template: input.template,
      enabled: input.enabled ?? true,
      ai,
      token,
      tokenHash: hashWebhookToken(token),
      senders: senderChanges(NEW_CHANNEL_SENDERS, input),
      reply: await this.replyChanges(input.reply_delivery, input.destinations),
      acceptWhen: input.accept_when ?? [],
    };
    const names = namedProviders(ai);
    const { destinations, reply_delivery } = input;
    const row = await this.db.transaction(async (tx) => {
      if (names.some((name) => name !== DEFAULT_PROVIDER))
        await this.options.requireProviders(tx, workspaceId, names);
      if (ai.tools.length) await this.options.requireTools(tx, workspaceId, ai.tools);
      const inserted = await repo.insertChannel(tx, this.secrets, channel);
      if (reply_delivery)
        await this.options.destinations.writeReplyDelivery(tx, inserted.id, reply_delivery);
      if (destinations) await this.options.destinations.replace(tx, inserted.id, destinations);
      await recordAudit(tx, {
        workspaceId,
        action: 'channel.create',
        target: { kind: 'channel', id: inserted.id },
        changes: changesBetween(undefined, auditedMembers(inserted), AUDITED_MEMBERS),
      });
      return inserted;
    });
    return this.withDestinations(row);
  }

  /** The names of the channels whose `ai.tools` name `tool` (on `db`, e.g. a transaction). */
  namingTool(db: Queryable, workspaceId: string, tool: string): Promise<string[]> {
    return repo.channelsNamingTool(db, workspaceId, tool);
  }

  /** The names of the channels whose AI settings name `provider` (on `db`, e.g. a transaction). */
  namingProvider(db: Queryable, workspaceId: string, provider: string): Promise<string[]> {
    return repo.channelsNamingProvider(db, workspaceId, provider);
  }

  async list(workspaceId: string): Promise<Channel[]> {
    return this.toChannels(await repo.listChannels(this.db, workspaceId));
  }

  /** Each channel's activity today, by channel id, for the channel list. */
  activity(workspaceId: string): Promise<Map<string, ChannelStats>> {
    return channelStats(this.db, workspaceId);
  }

  async get(workspaceId: string, id: string): Promise<Channel> {
    return this.withDestinations(orNotFound(await repo.findChannel(this.db, workspaceId, id)));
  }

  /**
   * `ai` merges into the stored settings member by member (null clears a member, `ai: null`
   * clears them all), read and written in one transaction so that two admins changing
   * different members do not undo each other.
   */
  async update(workspaceId: string, id: string, changes: UpdateChannel): Promise<Channel> {
    const {
      verification,
      allowed_ips,
      allowed_origins,
      dedup,
      reply_delivery,
      ai,
      accept_when,
      destinations,
      ...plain
    } = changes;
    const acceptWhen = accept_when === undefined ? undefined : (accept_when ?? []);
    const reply = await this.replyChanges(reply_delivery, destinations);
    const write = async (db: Queryable) => {
      const before = await repo.findChannel(db, workspaceId, id, { forUpdate: true });
      if (!before) throw notFound('This channel');
      let senders;
      if (verification || allowed_ips || allowed_origins || dedup) {
        const stored = await repo.findSenderSettings(db, this.secrets, workspaceId, id);
        if (!stored) throw notFound('This channel');
        senders = senderChanges(stored, { verification, allowed_ips, allowed_origins, dedup });
      }
      let merged: AiSettings | undefined;
      if (ai !== undefined) {
        merged = mergeAiSettings(toAiSettings(before.ai), ai);
        await this.options.requireProviders(db, workspaceId, namedProviders(merged));
        await this.options.requireTools(db, workspaceId, merged.tools);
      }
      const row = await repo.updateChannel(db, this.secrets, workspaceId, id, {
        ...plain,
        senders,
        reply,
        ai: merged,
        acceptWhen,
      });
      if (row && reply_delivery)
        await this.options.destinations.writeReplyDelivery(db, row.id, reply_delivery);
      if (row && destinations) await this.options.destinations.replace(db, row.id, destinations);
      if (row) {
        // Secrets (the verification secret, the reply URL's and destinations' credentials)
        // are recorded as changed, never as what they are.
        const secret = [
          ...(verification?.secret !== undefined ? ['verification.secret'] : []),
          ...(reply_delivery !== undefined ? ['reply_delivery'] : []),
          ...(destinations !== undefined ? ['destinations'] : []),
        ];
        const given = Object.keys(changes).filter((member) => AUDITED_MEMBERS.includes(member));
        // Turning a channel on or off is its own action, as the panel's button is.
        const onlyEnabled = Object.keys(changes).length === 1 && plain.enabled !== undefined;
        const action = !onlyEnabled
          ? 'channel.update'
          : plain.enabled
            ? 'channel.enable'
            : 'channel.disable';
        await recordAudit(db, {
          workspaceId,
          action,
          target: { kind: 'channel', id },
          changes: changesBetween(
            auditedMembers(before),
            auditedMembers(row),
            [...given, ...secret],
            secret,
          ),
        });
      }
      return row;
    };
    const row = await this.db.transaction(write);
    if (row) this.options.onChanged?.(row.webhook_token_hash);
    return this.withDestinations(orNotFound(row));
  }

  /**
   * A reply URL must not lead to this host or its private network (SSRF) unless
   * DELIVERY_ALLOW_PRIVATE is set; checked here, when it is saved, and again at every connection.
   */
  private async replyChanges(
    change: ReplyDeliveryChange | undefined,
    destinations: readonly DestinationInput[] | undefined,
  ): Promise<repo.ReplyChanges> {
    if (destinations) await this.options.destinations.checkUrls(destinations);
    const url = change?.url;
    if (url) {
      const refused = await whyUnreachable(new URL(url), {
        allowPrivate: this.options.allowPrivateReplyUrls,
        setting: 'DELIVERY_ALLOW_PRIVATE',
      });
      if (refused) {
        const message = `refused: ${refused} (set DELIVERY_ALLOW_PRIVATE=true to allow it)`;
        throw invalidField('reply_delivery.url', message);
      }
    }
    // The reply URL and `webhook` destinations sign with the channel's secret: made when needed.
    const signing = !!url || !!destinations?.some((destination) => destination.kind === 'webhook');
    return { secret: newSigningSecret(), signing };
  }

  /** The channel's versions, newest first. */
  async versions(workspaceId: string, id: string): Promise<ChannelVersion[]> {
    const rows = await repo.listChannelVersions(this.db, workspaceId, id);
    if (rows.length === 0) await this.get(workspaceId, id);
    return rows.map((row) => ({
      version: row.version,
      template: row.template,
      ai: toAiSettings(row.ai),
      created_at: new Date(row.created_at).toISOString(),
    }));
  }

  /**
   * Makes a kept version's template and AI settings the channel's again, as a new version (none
   * when they are what the channel has now). Its providers must still exist.
   */
  async restore(workspaceId: string, id: string, version: number): Promise<Channel> {
    const kept = await repo.findChannelVersion(this.db, workspaceId, id, version);
    if (!kept) throw notFound('This version');
    return this.replacePrompt(workspaceId, id, kept.template, toAiSettings(kept.ai), {
      action: 'channel.restore',
      changes: { restored_version: version },
    });
  }

  /**
   * Sets the template and the whole AI settings (a restore, a trial's promote): the next version
   * when either differs from what the channel has.
   */
  async replacePrompt(
    workspaceId: string,
    id: string,
    template: string,
    ai: AiSettings,
    /** How the audit log records it: a restore of the channel, a trial's promote. */
    audit: { action: string; target?: { kind: string; id: string }; changes?: AuditChanges },
  ): Promise<Channel> {
    const row = await this.db.transaction(async (tx) => {
      const before = await repo.findChannel(tx, workspaceId, id, { forUpdate: true });
      if (!before) return undefined;
      await this.options.requireProviders(tx, workspaceId, namedProviders(ai));
      await this.options.requireTools(tx, workspaceId, ai.tools);
      const row = await repo.updateChannel(tx, this.secrets, workspaceId, id, {
        template,
        ai,
        reply: { secret: newSigningSecret(), signing: false },
      });
      if (row)
        await recordAudit(tx, {
          workspaceId,
          action: audit.action,
          target: audit.target ?? { kind: 'channel', id },
          changes: {
            ...audit.changes,
            ...changesBetween(auditedMembers(before), auditedMembers(row), ['template', 'ai']),
          },
        });
      return row;
    });
    if (row) this.options.onChanged?.(row.webhook_token_hash);
    return this.withDestinations(orNotFound(row));
  }

  /** The old URL stops working at once: requests are matched by the token's hash, which changes here. */
  async regenerateUrl(workspaceId: string, id: string): Promise<Channel> {
    const token = newWebhookToken();
    const row = await this.db.transaction(async (tx) => {
      const replaced = await repo.replaceWebhookToken(
        tx,
        this.secrets,
        workspaceId,
        id,
        token,
        hashWebhookToken(token),
      );
      if (replaced)
        await recordAudit(tx, {
          workspaceId,
          action: 'channel.regenerate_url',
          target: { kind: 'channel', id },
          changes: { webhook_url: CHANGED },
        });
      return replaced;
    });
    // The old URL stops working in this process now, not when its notification arrives.
    if (row) this.options.onChanged?.(row.previous_token_hash);
    return this.withDestinations(orNotFound(row));
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const tokenHash = await this.db.transaction(async (tx) => {
      const deleted = await repo.markChannelDeleted(tx, workspaceId, id);
      if (deleted !== undefined)
        await recordAudit(tx, {
          workspaceId,
          action: 'channel.delete',
          target: { kind: 'channel', id },
        });
      return deleted;
    });
    if (tokenHash === undefined) throw notFound('This channel');
    this.options.onChanged?.(tokenHash);
  }
}

function orNotFound(row: repo.ChannelRow | undefined): repo.ChannelRow {
  if (!row) throw notFound('This channel');
  return row;
}

/** The members of a channel the audit log shows before and after a change (no secrets). */
const AUDITED_MEMBERS = [
  'name',
  'enabled',
  'template',
  'ai',
  'verification',
  'allowed_ips',
  'allowed_origins',
  'dedup',
  'accept_when',
];

function auditedMembers(row: repo.ChannelRow): Record<string, unknown> {
  return {
    name: row.name,
    enabled: row.enabled,
    template: row.template,
    ai: toAiSettings(row.ai),
    verification: row.verification,
    allowed_ips: row.allowed_ips,
    allowed_origins: row.allowed_origins,
    dedup: row.dedup,
    accept_when: row.accept_when ?? [],
  };
}
