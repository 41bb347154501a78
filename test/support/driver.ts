import request from 'supertest';
import type { ReceivingChannel } from '../../src/hooks/ingest-service.js';
import type { TestApp } from './test-app.js';
import { TEST_ADMIN_KEY } from './test-app.js';

export interface ChannelJson {
  id: string;
  name: string;
  enabled: boolean;
  template: string;
  webhook_url: string;
  created_at: string;
  updated_at: string;
}

export interface HookResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface StoredEvent {
  id: string;
  channel_id: string;
  status: string;
  payload: string;
  error: string | null;
  attempts: number;
  received_at: Date;
}

/** Domain verbs over HTTP, so tests read like what an admin or a sender does. */
export class Driver {
  constructor(
    private readonly app: TestApp,
    private readonly apiKey: string = TEST_ADMIN_KEY,
  ) {}

  /** A supertest request to the management API, authorised with this driver's key. */
  api(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string) {
    const agent = request(this.app.baseUrl);
    return agent[method](`/api/v1${path}`).set('Authorization', `Bearer ${this.apiKey}`);
  }

  async createChannel(
    input: { name?: string; template?: string; enabled?: boolean } & Record<string, unknown> = {},
  ): Promise<ChannelJson> {
    const res = await this.api('post', '/channels').send({
      name: 'Orders',
      template: 'Order {{order.id}}',
      ...input,
    });
    if (res.status !== 201) throw new Error(`createChannel: ${res.status} ${res.text}`);
    return res.body as ChannelJson;
  }

  /** A channel as the receiver sees it, looked up by its webhook URL's token. */
  async receivingChannel(channel: ChannelJson): Promise<ReceivingChannel> {
    const token = channel.webhook_url.slice(channel.webhook_url.lastIndexOf('/') + 1);
    const receiving = await this.app.ctx.ingest.findChannel(token);
    if (!receiving) throw new Error(`receivingChannel: no channel for ${channel.id}`);
    return receiving;
  }

  updateChannel(id: string, changes: Record<string, unknown>) {
    return this.api('patch', `/channels/${id}`).send(changes);
  }

  setWorkspace(changes: Record<string, unknown>) {
    return this.api('patch', '/workspace').send(changes);
  }

  /**
   * POSTs a body to a webhook URL as a sender would: an object is sent as JSON text, a string or
   * bytes as they are; `contentType: null` sends no Content-Type header at all.
   */
  async sendEvent(
    webhookUrl: string,
    body: unknown = { order: { id: 1 } },
    {
      contentType = 'application/json' as string | null,
      method = 'POST',
      headers: extra = {} as Record<string, string>,
    } = {},
  ): Promise<HookResponse> {
    const text =
      typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
    const headers: Record<string, string> = {
      ...(contentType === null ? {} : { 'Content-Type': contentType }),
      ...extra,
    };
    const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    const res = await fetch(webhookUrl, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : bytes,
    });
    const raw = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
    };
  }

  /** The events stored for a channel, oldest first, read straight from the database. */
  async eventsOf(channelId: string): Promise<StoredEvent[]> {
    const { rows } = await this.app.ctx.db.query<StoredEvent>(
      `select id, channel_id, status, payload, error, attempts, received_at
       from events where channel_id = $1 order by id`,
      [channelId],
    );
    return rows;
  }
}
