import type { Router } from 'express';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open-database.js';
import { ChannelsService } from './channels/channels-service.js';
import { EventsService } from './events/events-service.js';
import { createHookRateLimits, type HookRateLimits } from './hooks/rate-limits.js';
import { IngestService } from './hooks/ingest-service.js';
import { createLogger, type Logger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { AdminsService } from './panel/admins-service.js';
import { createFirstAdmin } from './panel/first-admin.js';
import { SessionsService } from './panel/sessions-service.js';
import { connectRedis, type RedisClient } from './redis.js';
import { ApiKeysService } from './workspaces/api-keys-service.js';
import { WorkspacesService } from './workspaces/workspaces-service.js';

/** Everything the app and the worker share, built once at start-up (the composition root). */
export interface AppContext {
  config: Config;
  log: Logger;
  db: Database;
  redis: RedisClient | undefined;
  defaultWorkspaceId: string;
  workspaces: WorkspacesService;
  channels: ChannelsService;
  ingest: IngestService;
  hookLimits: HookRateLimits;
  /** Brain Logs: the received events, for the API and the panel. */
  events: EventsService;
  /** This context's Prometheus registry and instruments (`GET /metrics`). */
  metrics: Metrics;
  /** Panel admins, their workspaces, and their sign-in sessions. */
  admins: AdminsService;
  sessions: SessionsService;
  /** Management API keys, created in the panel. */
  apiKeys: ApiKeysService;
  /** Further `/api/v1` routers of features built on this context. */
  extraApiRoutes: Router[];
}

export interface ContextOptions {
  log?: Logger;
  /** An already open database (tests); otherwise one is opened from the config. */
  db?: Database;
}

export async function createContext(
  config: Config,
  options: ContextOptions = {},
): Promise<AppContext> {
  const log = options.log ?? createLogger(config.logLevel);
  const db =
    options.db ??
    (await openDatabase(config, (error) => log.warn({ err: error }, 'database connection lost')));
  try {
    const applied = await migrate(db);
    if (applied.length) log.info({ applied }, 'database migrated');
    const workspaces = new WorkspacesService(db);
    const defaultWorkspace = await workspaces.ensureDefault(config.defaultChatQuota);
    const redis = config.redisUrl ? await connectRedis(config.redisUrl, log) : undefined;
    const metrics = new Metrics();
    const admins = new AdminsService(db);
    // Only processes that serve the panel need someone able to sign in to it.
    if (config.role !== 'worker') await createFirstAdmin(admins, config, defaultWorkspace.id, log);
    const ingest = new IngestService(db, config.bodyLimitBytes);
    if (config.role !== 'worker') await ingest.start();
    return {
      config,
      log,
      db,
      redis,
      defaultWorkspaceId: defaultWorkspace.id,
      workspaces,
      channels: new ChannelsService(db, config.publicBaseUrl),
      ingest,
      hookLimits: createHookRateLimits(config, redis, log),
      events: new EventsService(db),
      metrics,
      admins,
      sessions: new SessionsService(db, config.sessionTtlHours),
      apiKeys: new ApiKeysService(db),
      extraApiRoutes: [],
    };
  } catch (error) {
    if (!options.db) await db.close().catch(() => undefined);
    throw error;
  }
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.ingest.stop();
  await ctx.redis?.quit().catch(() => undefined);
  await ctx.db.close();
}
