import { auditOrigin, type AuditActor } from '../audit/audit-context.js';
import type { AuditLog } from '../audit/audit-log.js';
import { auditRoutes } from '../audit/audit-routes.js';
import { Router } from 'express';
import { alertsRoutes } from '../alerts/alerts-routes.js';
import type { AlertsService } from '../alerts/alerts-service.js';
import { approvalsRoutes } from '../approvals/approvals-routes.js';
import type { ApprovalsService } from '../approvals/approvals-service.js';
import { adminsRoutes } from '../auth/admins-routes.js';
import type { InvitationsService } from '../auth/invitations-service.js';
import type { ChannelsService } from '../channels/channels-service.js';
import type { EventPages } from '../brain-logs/event-pages.js';
import type { EventReader } from '../brain-logs/event-reader.js';
import type { EventsReplay } from '../brain-logs/events-replay.js';
import type { LiveStreams } from '../brain-logs/live-streams.js';
import { channelsRoutes } from '../channels/channels-routes.js';
import type { DeliveriesService } from '../deliveries/deliveries-service.js';
import { deliveriesRoutes } from '../deliveries/deliveries-routes.js';
import { eventsRoutes } from '../brain-logs/events-routes.js';
import { notFound } from '../platform/errors.js';
import type { Role } from '../platform/roles.js';
import { pricesRoutes } from '../prices/prices-routes.js';
import type { PricesService } from '../prices/prices-service.js';
import { spendRoutes } from '../spend/spend-routes.js';
import type { SpendService } from '../spend/spend-service.js';
import { providersRoutes } from '../providers/providers-routes.js';
import { toolsRoutes } from '../tools/tools-routes.js';
import type { ToolsService } from '../tools/tools-service.js';
import type { ProvidersService } from '../providers/providers-service.js';
import { trialsRoutes } from '../trials/trials-routes.js';
import type { TrialsService } from '../trials/trials-service.js';
import { usageRoutes } from '../usage/usage-routes.js';
import type { UsageService } from '../usage/usage-service.js';
import { apiKeysRoutes } from '../workspaces/api-keys-routes.js';
import type { ApiKeysService } from '../workspaces/api-keys-service.js';
import type { WorkspacesService } from '../workspaces/workspaces-service.js';
import { workspaceRoutes } from '../workspaces/workspaces-routes.js';
import { requireApiKey } from './api-auth.js';
import { API_ROLES } from './api-roles.js';
import { jsonBody } from './json-body.js';
import { openApiRoutes } from './openapi-routes.js';

export interface ApiServices {
  config: { publicBaseUrl: string };
  apiKeys: ApiKeysService;
  workspaces: WorkspacesService;
  channels: ChannelsService;
  trials: TrialsService;
  providers: ProvidersService;
  tools: ToolsService;
  eventReader: EventReader;
  eventPages: EventPages;
  deliveries: DeliveriesService;
  usage: UsageService;
  prices: PricesService;
  spend: SpendService;
  eventsReplay: EventsReplay;
  approvals: ApprovalsService;
  liveStreams: LiveStreams;
  invitations: InvitationsService;
  alerts: AlertsService;
  auditLog: AuditLog;
}

/**
 * The management API under `/api/v1`: bearer-key auth, JSON in and out, problem+json errors.
 * Every route here is described in docs/openapi.yaml (test/api/openapi.test.ts holds them equal).
 */
export function apiRouter(services: ApiServices): Router {
  const router = Router();
  // The description of the API is public: clients read it before they have a key.
  router.use(openApiRoutes(services.config.publicBaseUrl));
  router.use(requireApiKey(services.apiKeys));
  // Every route's role is checked here, from one table, before the route runs.
  router.use(API_ROLES.gate((res) => res.locals.role as Role));
  router.use(jsonBody());
  // The key is the actor of every change this request makes (the audit log).
  router.use(auditOrigin((res) => res.locals.actor as AuditActor));
  router.use(workspaceRoutes(services.workspaces));
  router.use(channelsRoutes(services.channels));
  router.use(trialsRoutes(services.trials));
  router.use(providersRoutes(services.providers));
  router.use(toolsRoutes(services.tools));
  router.use(deliveriesRoutes(services.deliveries));
  router.use(
    eventsRoutes({
      reader: services.eventReader,
      pages: services.eventPages,
      replay: services.eventsReplay,
      streams: services.liveStreams,
      deliveries: services.deliveries,
    }),
  );
  router.use(approvalsRoutes(services.approvals));
  router.use(usageRoutes(services.usage));
  router.use(pricesRoutes(services.prices));
  router.use(spendRoutes(services.spend));
  router.use(apiKeysRoutes(services.apiKeys));
  router.use(adminsRoutes(services.invitations));
  router.use(alertsRoutes(services.alerts));
  router.use(auditRoutes(services.auditLog));
  router.use(() => {
    throw notFound('This API path');
  });
  return router;
}
