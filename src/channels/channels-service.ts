import type { Database } from '../db/database.js';
import { notFound } from '../errors.js';
import { channelStats, type ChannelStats } from './channel-stats-repo.js';
import * as repo from './channels-repo.js';
import type { CreateChannel, UpdateChannel } from './channels-schemas.js';
import { hashWebhookToken, newWebhookToken } from './webhook-token.js';

export interface Channel {
  id: string;
  name: string;
  enabled: boolean;
  template: string;
  webhook_url: string;
  created_at: string;
  updated_at: string;
}

/** Channel management for one workspace at a time; used by the API and the panel alike. */
export class ChannelsService {
  constructor(
    private readonly db: Database,
    private readonly publicBaseUrl: string,
  ) {}

  webhookUrl(token: string): string {
    return `${this.publicBaseUrl}/hooks/${token}`;
  }

  private toChannel(row: repo.ChannelRow): Channel {
    return {
      id: row.id,
      name: row.name,
      enabled: row.enabled,
      template: row.template,
      webhook_url: this.webhookUrl(row.webhook_token),
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }

  async create(workspaceId: string, input: CreateChannel): Promise<Channel> {
    const token = newWebhookToken();
    const row = await repo.insertChannel(this.db, {
      workspaceId,
      name: input.name,
      template: input.template,
      enabled: input.enabled ?? true,
      token,
      tokenHash: hashWebhookToken(token),
    });
    return this.toChannel(row);
  }

  async list(workspaceId: string): Promise<Channel[]> {
    const rows = await repo.listChannels(this.db, workspaceId);
    return rows.map((row) => this.toChannel(row));
  }

  /** Each channel's activity today, by channel id, for the channel list. */
  activity(workspaceId: string): Promise<Map<string, ChannelStats>> {
    return channelStats(this.db, workspaceId);
  }

  async get(workspaceId: string, id: string): Promise<Channel> {
    return this.toChannel(orNotFound(await repo.findChannel(this.db, workspaceId, id)));
  }

  async update(workspaceId: string, id: string, changes: UpdateChannel): Promise<Channel> {
    return this.toChannel(orNotFound(await repo.updateChannel(this.db, workspaceId, id, changes)));
  }

  /** The old URL stops working at once: requests are matched by the token's hash, which changes here. */
  async regenerateUrl(workspaceId: string, id: string): Promise<Channel> {
    const token = newWebhookToken();
    const row = await repo.replaceWebhookToken(
      this.db,
      workspaceId,
      id,
      token,
      hashWebhookToken(token),
    );
    return this.toChannel(orNotFound(row));
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    if (!(await repo.markChannelDeleted(this.db, workspaceId, id))) throw notFound('This channel');
  }
}

function orNotFound(row: repo.ChannelRow | undefined): repo.ChannelRow {
  if (!row) throw notFound('This channel');
  return row;
}
