import type { ApprovalsService } from '../approvals/approvals-service.js';
import type { AlertsService } from '../alerts/alerts-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { AdminsService } from '../auth/admins-service.js';
import type { InvitationsService } from '../auth/invitations-service.js';
import type { SessionsService } from '../auth/sessions-service.js';
import type { OidcSignIns } from '../auth/oidc-service.js';
import type { ChannelsService } from '../channels/channels-service.js';
import type { TrialsService } from '../trials/trials-service.js';
import type { Config } from '../platform/config.js';
import type { DeliveriesService } from '../deliveries/deliveries-service.js';
import type { DestinationsService } from '../destinations/destinations-service.js';
import type { EventCounts } from '../brain-logs/event-counts.js';
import type { EventPages } from '../brain-logs/event-pages.js';
import type { EventReader } from '../brain-logs/event-reader.js';
import type { EventsReplay } from '../brain-logs/events-replay.js';
import type { EventThreads } from '../brain-logs/events-thread.js';
import type { LiveStreams } from '../brain-logs/live-streams.js';
import type { IngestService } from '../hooks/ingest-service.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisClient } from '../platform/redis.js';
import type { SpendService } from '../spend/spend-service.js';
import type { ReplyCacheService } from '../reply-cache/reply-cache-service.js';
import type { ProvidersService } from '../providers/providers-service.js';
import type { ToolsService } from '../tools/tools-service.js';
import type { UsageService } from '../usage/usage-service.js';
import type { ApiKeysService } from '../workspaces/api-keys-service.js';
import type { WorkspacesService } from '../workspaces/workspaces-service.js';

/** What the panel's pages use: the same services as the API, plus sign-in. */
export interface PanelServices {
  config: Config;
  log: Logger;
  /** Shares the sign-in rate limit between instances, when set. */
  redis: RedisClient | undefined;
  /** Counts sign-ins let through uncounted while Redis does not answer. */
  metrics: Metrics;
  admins: AdminsService;
  sessions: SessionsService;
  /** Who changed what in the workspace (the `/audit` page). */
  auditLog: AuditLog;
  /** Sign-in with the company's identity provider; undefined when OIDC_* is not set. */
  oidcSignIns: OidcSignIns | undefined;
  /** Adding and removing the admins of a workspace. */
  invitations: InvitationsService;
  workspaces: WorkspacesService;
  apiKeys: ApiKeysService;
  channels: ChannelsService;
  /** Candidate prompts tried on recent events. */
  trials: TrialsService;
  /** The AI providers channels may name. */
  providers: ProvidersService;
  /** The HTTP endpoints and MCP servers channels' models may call. */
  tools: ToolsService;
  /** Brain Logs: one event, its pages, counts and chart, an event's thread. */
  eventReader: EventReader;
  eventPages: EventPages;
  eventCounts: EventCounts;
  eventThreads: EventThreads;
  /** Reply delivery: the channel's secret, the last result, attempts, "deliver again". */
  deliveries: DeliveriesService;
  /** Destinations with their secrets opened, for the editor's "Send a test message". */
  destinations: DestinationsService;
  /** Tokens and events per day, for the Workspace page's chart. */
  usage: UsageService;
  /** What AI calls cost per day, for the same chart. */
  spend: SpendService;
  /** What the reply caches saved this month. */
  replyCache: ReplyCacheService;
  /** Brain Logs replay, one event or a filter's worth. */
  eventsReplay: EventsReplay;
  /** Approve or Deny the tool call an event waits with. */
  approvals: ApprovalsService;
  /** Brain Logs live tail. */
  liveStreams: LiveStreams;
  /** The receiver, for the editor's "send test event". */
  ingest: IngestService;
  /** Alert rules with their state and history. */
  alerts: AlertsService;
  /** The workspace ADMIN_API_KEY manages. */
  readonly defaultWorkspaceId: string;
}
