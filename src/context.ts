import { join } from 'node:path';
import { createAlertsEvaluator, type AlertsEvaluator } from './alerts/alerts-evaluator.js';
import { ApprovalTimeouts } from './approvals/approval-timeouts.js';
import { ApprovalsService } from './approvals/approvals-service.js';
import { AlertsService } from './alerts/alerts-service.js';
import { AuditLog } from './audit/audit-log.js';
import { AuditRetention } from './audit/audit-retention.js';
import { AdminsService } from './auth/admins-service.js';
import { createFirstAdmin } from './auth/first-admin.js';
import { InvitationsService } from './auth/invitations-service.js';
import { SessionsService } from './auth/sessions-service.js';
import { OidcSignIns } from './auth/oidc-service.js';
import { EventCounts } from './brain-logs/event-counts.js';
import { EventPages } from './brain-logs/event-pages.js';
import { EventReader } from './brain-logs/event-reader.js';
import { EventsFeed } from './brain-logs/events-feed.js';
import { EventsReplay } from './brain-logs/events-replay.js';
import { EventThreads } from './brain-logs/events-thread.js';
import { LiveStreams } from './brain-logs/live-streams.js';
import { ChannelsService } from './channels/channels-service.js';
import type { Config } from './platform/config.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open-database.js';
import { DestinationsService } from './destinations/destinations-service.js';
import { createDeliveryWorker } from './deliveries/create-delivery-worker.js';
import { DeliveriesService } from './deliveries/deliveries-service.js';
import type { DeliveryWorker } from './deliveries/delivery-worker.js';
import { EventAnswers } from './events/event-answers.js';
import { EventWaits } from './events/event-waits.js';
import { createEventsRetention, type EventsRetention } from './events/events-retention.js';
import { EventsStore } from './events/events-store.js';
import { DecodeBudget } from './hooks/decode-budget.js';
import { createHookRateLimits, type HookRateLimits } from './hooks/rate-limits.js';
import { IngestService } from './hooks/ingest-service.js';
import { createLogger, type Logger } from './platform/logger.js';
import { startTracing, stopTracing } from './tracing/tracing.js';
import { ProviderInstances } from './providers/provider-instances.js';
import { ProvidersService } from './providers/providers-service.js';
import { ToolsService } from './tools/tools-service.js';
import { Metrics, type QueueStats } from './metrics/metrics.js';
import { createRedis, type RedisConnection } from './platform/redis.js';
import type { SecretBox } from './secrets/secret-box.js';
import { KEY_FILE_NAME, openSecretBox } from './secrets/secrets-key.js';
import { prepareStoredSecrets } from './secrets/stored-secrets.js';
import { PricesService } from './prices/prices-service.js';
import type { ShutdownStep } from './platform/shutdown.js';
import { BudgetGate } from './spend/budget-gate.js';
import { SpendLedger } from './spend/spend-ledger.js';
import { SpendService } from './spend/spend-service.js';
import { ReplyCacheService } from './reply-cache/reply-cache-service.js';
import { UsageService } from './usage/usage-service.js';
import { createTrialWorker } from './trials/create-trial-worker.js';
import type { TrialWorker } from './trials/trial-worker.js';
import { TrialsService } from './trials/trials-service.js';
import { createWorker } from './worker/create-worker.js';
import { queueStats } from './worker/queue-stats.js';
import type { Worker } from './worker/worker.js';
import { ApiKeysService } from './workspaces/api-keys-service.js';
import { WorkspacesService } from './workspaces/workspaces-service.js';

export interface ContextOptions {
  log?: Logger;
  /** An already open database (tests); otherwise one is opened from the config, and closed by stop(). */
  db?: Database;
}

export interface StartOptions {
  /**
   * Run the role's background work (the worker, event retention). Tests turn it off and drive
   * `worker.runOnce()` themselves.
   */
  background?: boolean;
}

/**
 * The composition root: everything the app and the worker share, built once. Building wires
 * objects together and touches nothing outside the process but the database handle; `start()`
 * migrates, seeds, connects and listens; `stop()` undoes it in reverse order.
 */
export class AppContext {
  readonly metrics = new Metrics((workspaceId, model) =>
    this.prices.modelLabel(workspaceId, model),
  );
  readonly workspaces: WorkspacesService;
  readonly channels: ChannelsService;
  readonly destinations: DestinationsService;
  readonly ingest: IngestService;
  /** Stored events read by id (reply delivery's messages carry them). */
  readonly eventsStore: EventsStore;
  /** Senders' answers about their events, held until the event finishes when asked to. */
  readonly answers: EventAnswers;
  private readonly waits: EventWaits;
  /** Reply delivery: signing secrets, delivery states and attempts, "deliver again". */
  readonly deliveries: DeliveriesService;
  /** Sends reply deliveries; absent in a `ROLE=web` process. */
  readonly deliveryWorker: DeliveryWorker | undefined;
  /** Brain Logs: an event as the API shows it, with its reply delivery. */
  readonly eventReader: EventReader;
  /** Brain Logs pages, newest first, for the API and the panel. */
  readonly eventPages: EventPages;
  /** A filter's count and chart, each channel's last day. */
  readonly eventCounts: EventCounts;
  /** An event's thread, for its page. */
  readonly eventThreads: EventThreads;
  /** Replaying finished events, one or a filter's worth. */
  readonly eventsReplay: EventsReplay;
  /** Operators' decisions on the tool calls events wait with. */
  readonly approvals: ApprovalsService;
  /** Denies the calls nobody decided on within APPROVAL_TIMEOUT_S (background roles only). */
  readonly approvalTimeouts: ApprovalTimeouts | undefined;
  /** The live tail of Brain Logs (Server-Sent Events), across instances. */
  readonly eventsFeed: EventsFeed;
  /** The streams of the API and the panel on that feed, STREAMS_PER_KEY per key or session. */
  readonly liveStreams: LiveStreams;
  /** Tokens and events per day or channel (the API and the panel's Workspace page). */
  readonly usage: UsageService;
  /** The workspaces' own prices per model, over the price table shipped with the service. */
  readonly prices: PricesService;
  /** Where every AI call's spend is recorded (the ledger and the month's counter). */
  readonly spendLedger: SpendLedger;
  /** Where AI calls outside the queues (provider tests) pass the workspaces' budgets. */
  readonly budget: BudgetGate;
  /** What AI calls cost per day, model and channel (the API and the panel's Workspace page). */
  readonly spend: SpendService;
  /** What the channels' reply caches saved (the panel's Workspace page). */
  readonly replyCache: ReplyCacheService;
  /** Panel admins, their workspaces, and their sign-in sessions. */
  readonly admins: AdminsService;
  readonly sessions: SessionsService;
  /** Sign-in with the company's identity provider, when OIDC_* is set. */
  readonly oidcSignIns: OidcSignIns | undefined;
  /** Management API keys (and ADMIN_API_KEY). */
  readonly apiKeys: ApiKeysService;
  /** Who else may open a workspace: its admins and the invitations sent to new ones. */
  readonly invitations: InvitationsService;
  /** The AI providers of each workspace (the built-in `default` and those its admins add). */
  readonly providers: ProvidersService;
  /** The tools of each workspace (HTTP endpoints and MCP servers), stored and tested. */
  readonly tools: ToolsService;
  /** The workspaces' providers as this process's worker calls them. */
  private readonly providerInstances: ProviderInstances;
  /** Answers events with the AI; absent in a `ROLE=web` process. */
  readonly worker: Worker | undefined;
  /** Candidate prompts tried on a channel's real events: versions before they go live. */
  readonly trials: TrialsService;
  /** Asks trials' candidates with a quarter of the worker's slots; absent in a `ROLE=web` process. */
  readonly trialWorker: TrialWorker | undefined;
  /** Alert rules, their history, and the workspaces' alert secrets. */
  readonly alerts: AlertsService;
  /** Checks the alerts and sends their notifications; absent in a `ROLE=web` process. */
  readonly alertsEvaluator: AlertsEvaluator | undefined;
  /** Deletes old events; absent in a `ROLE=web` process or when events are kept forever. */
  readonly retention: EventsRetention | undefined;
  /** Who changed what: read by the API and the panel (written inside each change's transaction). */
  readonly auditLog: AuditLog;
  /** Deletes audit entries older than AUDIT_RETENTION_DAYS; absent in a `ROLE=web` process. */
  readonly auditRetention: AuditRetention | undefined;
  private defaultWorkspace: string | undefined;
  private limits: HookRateLimits | undefined;
  private running: StartOptions | undefined;

  constructor(
    readonly config: Config,
    readonly log: Logger,
    readonly db: Database,
    /** Seals the secrets stored in the database (channel secrets) and opens them. */
    readonly secrets: SecretBox,
    /** Rate-limit counters shared by every instance; optional, and never waited for. */
    readonly redis: RedisConnection | undefined,
    private readonly ownsDatabase: boolean,
  ) {
    this.workspaces = new WorkspacesService(db);
    this.destinations = new DestinationsService(db, secrets, config.delivery.allowPrivate);
    this.channels = new ChannelsService(db, secrets, {
      destinations: this.destinations,
      publicBaseUrl: config.publicBaseUrl,
      allowPrivateReplyUrls: config.delivery.allowPrivate,
      // This process's receiver sees its own changes at once; others hear of them by NOTIFY.
      onChanged: (tokenHash) => this.ingest.forgetChannel(tokenHash),
      requireProviders: (tx, workspaceId, names) =>
        this.providers.requireNames(tx, workspaceId, names),
      requireTools: (tx, workspaceId, names) => this.tools.requireNames(tx, workspaceId, names),
    });
    this.spendLedger = new SpendLedger(db, this.metrics);
    this.budget = new BudgetGate(db, (call) => this.spendLedger.recordSpend(call), log);
    this.providers = new ProvidersService(db, secrets, {
      ai: config.ai,
      channelsNaming: (tx, workspaceId, name) =>
        this.channels.namingProvider(tx, workspaceId, name),
      // This process's worker uses a change at once; others read providers again within seconds.
      onChanged: (workspaceId) => this.providerInstances.forget(workspaceId),
      pricesFor: (workspaceId, kind) => this.prices.pricesFor(workspaceId, kind),
      budget: this.budget,
    });
    this.tools = new ToolsService(db, secrets, {
      allowPrivate: config.tools.allowPrivate,
      channelsNaming: (tx, workspaceId, name) => this.channels.namingTool(tx, workspaceId, name),
    });
    this.providerInstances = new ProviderInstances(this.providers, config.ai.model);
    this.ingest = new IngestService(
      db,
      secrets,
      config,
      this.metrics.eventBatchWrites,
      new DecodeBudget(config.decodeMemoryLimitBytes),
      () => this.hookLimits,
    );
    this.eventsStore = new EventsStore(db);
    this.waits = new EventWaits(db, config.workerPollIntervalMs, log);
    this.answers = new EventAnswers(db, this.waits);
    this.deliveries = new DeliveriesService(db, this.destinations);
    this.eventReader = new EventReader(db, this.deliveries.deliveriesOf);
    this.eventPages = new EventPages(db, this.eventReader);
    this.eventCounts = new EventCounts(db);
    this.eventThreads = new EventThreads(db);
    this.eventsReplay = new EventsReplay(db, this.eventReader, this.workspaces);
    this.approvals = new ApprovalsService(db, (workspaceId, id) =>
      this.eventReader.get(workspaceId, id),
    );
    this.eventsFeed = new EventsFeed(db, log);
    this.liveStreams = new LiveStreams(this.eventsFeed, config.streamsPerKey);
    this.usage = new UsageService(db);
    this.prices = new PricesService(db);
    this.spend = new SpendService(db);
    this.replyCache = new ReplyCacheService(db);
    this.admins = new AdminsService(db, this.workspaces);
    this.invitations = new InvitationsService(db, config.publicBaseUrl);
    this.sessions = new SessionsService(db, config.sessionTtlHours);
    this.oidcSignIns =
      config.oidc &&
      new OidcSignIns(db, config.oidc, config.publicBaseUrl, () => this.defaultWorkspaceId, log);
    this.apiKeys = new ApiKeysService(db, {
      adminApiKey: config.adminApiKey,
      defaultWorkspaceId: () => this.defaultWorkspaceId,
    });
    this.alerts = new AlertsService(db, secrets, this.metrics.registry, config.delivery);
    const background = config.role !== 'web';
    this.trials = new TrialsService(db, this.channels, {
      requireProviders: (tx, workspaceId, names) =>
        this.providers.requireNames(tx, workspaceId, names),
      requireTools: (tx, workspaceId, names) => this.tools.requireNames(tx, workspaceId, names),
    });
    this.worker = background ? createWorker(this) : undefined;
    this.trialWorker = background ? createTrialWorker(this) : undefined;
    this.deliveryWorker = background ? createDeliveryWorker(this) : undefined;
    this.retention = background ? createEventsRetention(this) : undefined;
    this.auditLog = new AuditLog(db);
    this.auditRetention = background
      ? new AuditRetention({ db, log, retentionDays: config.auditRetentionDays })
      : undefined;
    this.alertsEvaluator = background ? createAlertsEvaluator(this) : undefined;
    this.approvalTimeouts = background ? new ApprovalTimeouts(this.approvals, log) : undefined;
  }

  /** The workspace ADMIN_API_KEY manages and the first admin joins; known once started. */
  get defaultWorkspaceId(): string {
    if (this.defaultWorkspace === undefined) throw new Error('the context has not been started');
    return this.defaultWorkspace;
  }

  /** The receiver's rate limits; made at start, with the other links to the outside. */
  get hookLimits(): HookRateLimits {
    if (this.limits === undefined) throw new Error('the context has not been started');
    return this.limits;
  }

  /** For `GET /metrics`: the queue figures, read from the database. */
  readonly readQueueStats = (): Promise<QueueStats> => queueStats(this.db);

  /** The worker's lookup of a workspace's own providers. */
  readonly workspaceProviders = (workspaceId: string) => this.providerInstances.of(workspaceId);

  async start(options: StartOptions = {}): Promise<void> {
    const { config, log } = this;
    await startTracing(config.tracing);
    const applied = await migrate(this.db);
    if (applied.length) log.info({ applied }, 'database migrated');
    await prepareStoredSecrets(this.db, this.secrets, log);
    this.defaultWorkspace = (await this.workspaces.ensureDefault(config.defaultChatQuota)).id;
    // Connecting goes on in the background: start-up does not wait for Redis.
    await this.redis?.connect();
    this.limits = createHookRateLimits(config, this.redis, log, this.metrics);
    const serving = config.role !== 'worker';
    // Only processes that serve the panel need someone able to sign in to it.
    if (serving) await createFirstAdmin(this.admins, config, this.defaultWorkspaceId, log);
    if (serving) await this.ingest.start();
    if (serving) await this.waits.start();
    if (options.background ?? true) {
      await this.worker?.start();
      await this.trialWorker?.start();
      await this.deliveryWorker?.start();
      this.retention?.start();
      this.auditRetention?.start();
      this.alertsEvaluator?.start();
      this.approvalTimeouts?.start();
    }
    this.running = options;
  }

  /**
   * Stops the background work (letting the worker finish or give back its events), then closes.
   * `step` names each part, so that a shutdown past its deadline can say what it waited for.
   */
  async stop(step: ShutdownStep = (_what, work) => work()): Promise<void> {
    if (this.running?.background ?? true) {
      await Promise.all([
        step('worker', async () => this.worker?.stop()),
        step('trial worker', async () => this.trialWorker?.stop()),
        step('reply delivery', async () => this.deliveryWorker?.stop()),
      ]);
      await step('event retention', async () => this.retention?.stop());
      await step('audit retention', async () => this.auditRetention?.stop());
      await step('alerts', async () => this.alertsEvaluator?.stop());
      await step('approval timeouts', async () => this.approvalTimeouts?.stop());
    }
    await step('tool connections', async () => this.tools.close());
    await step('held answers', () => this.waits.stop());
    await step('channel change listener', () => this.ingest.stop());
    await step('live tails', () => this.eventsFeed.stop());
    // After the worker and reply delivery: their last spans are exported too.
    await step('traces', () => stopTracing());
    if (this.redis?.isOpen) await step('redis', () => this.redis?.quit() ?? Promise.resolve());
    if (this.ownsDatabase) await step('database', () => this.db.close());
  }
}

/**
 * Opens the database (unless given one) and the key of its secrets, and builds the context
 * around them; nothing is started.
 */
export async function createContext(
  config: Config,
  options: ContextOptions = {},
): Promise<AppContext> {
  const log = options.log ?? createLogger(config.logLevel);
  const db =
    options.db ??
    (await openDatabase(config, (error) => log.warn({ err: error }, 'database connection lost')));
  try {
    const { box, source } = await openSecretBox(config, db.kind);
    if (source === 'new key file')
      log.info(
        { path: join(config.dataDir, KEY_FILE_NAME) },
        'generated the key of the stored secrets; back it up with the database',
      );
    const redis = config.redisUrl ? createRedis(config.redisUrl, log) : undefined;
    return new AppContext(config, log, db, box, redis, !options.db);
  } catch (error) {
    if (!options.db) await db.close();
    throw error;
  }
}
