import { existsSync } from 'node:fs';
import bytes from 'bytes';
import { z } from 'zod';
import { emailAddress } from './email-address.js';
import './validation-messages.js';

/** A configuration value that cannot be used; start-up stops with `message` as its one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .transform((url) => url.replace(/\/+$/, ''));

const byteSize = z.string().transform((value, ctx) => {
  const parsed = bytes.parse(value);
  if (parsed === null || !Number.isFinite(parsed) || parsed < 1) {
    ctx.addIssue({ code: 'custom', message: 'must be a size such as 512kb or 1mb' });
    return z.NEVER;
  }
  return parsed;
});

/** `5s,5m,30m,2h`: durations in ms, s, m, h or d, comma-separated, as milliseconds. */
const durationList = z.string().transform((value, ctx) => {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const entries = value.split(',').map((entry) => entry.trim());
  const parsed = entries.map((entry) => /^(\d{1,9})(ms|s|m|h|d)$/.exec(entry));
  if (parsed.some((match) => !match) || entries.length > 50) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a comma-separated list of durations such as 5s,5m,2h (at most 50)',
    });
    return z.NEVER;
  }
  return parsed.map((match) => Number(match?.[1]) * (units[match?.[2] ?? 'ms'] ?? 1));
});

/**
 * A key of 32 bytes, as 64 hex digits or base64 (standard or URL-safe alphabet), kept as hex: the
 * config is frozen, which a Buffer cannot be.
 */
const secretsKey = optionalText.transform((value, ctx) => {
  if (value === undefined) return undefined;
  const bytes = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(value)
      ? Buffer.from(value, 'base64')
      : undefined;
  if (bytes?.length !== 32) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be 32 bytes written as 64 hex digits or in base64 (openssl rand -hex 32)',
    });
    return z.NEVER;
  }
  return bytes.toString('hex');
});

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * An OpenID Connect issuer, exactly as its discovery document names it (a trailing slash is kept:
 * some issuers have one). Plain http only on this machine, for a local test identity provider.
 */
const oidcIssuer = optionalText.pipe(
  z
    .url({ protocol: /^https?$/, error: 'must be an https:// URL' })
    .refine(
      (url) => {
        const { protocol, hostname } = new URL(url);
        return protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
      },
      { error: 'must be an https:// URL (http:// only on localhost)' },
    )
    .optional(),
);

/** `example.com, Example.org`: lower-cased domain names, without duplicates. */
const domainList = z.string().transform((value, ctx) => {
  const domains = value
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  const bad = domains.find(
    (domain) =>
      !/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(domain),
  );
  if (bad !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `must be comma-separated domain names such as example.com (not ${JSON.stringify(bad)})`,
    });
    return z.NEVER;
  }
  return [...new Set(domains)];
});

/** The three settings OpenID Connect sign-in needs, all set or none. */
const OIDC_REQUIRED = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;

const otlpProtocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'must be http/protobuf or http/json (traces are exported over OTLP/HTTP only)',
});

const envSchema = z
  .object({
    PORT: integer(0, 65535).default(3000),
    WORKER_PORT: integer(0, 65535).optional(),
    HOST: z.string().trim().min(1).default('127.0.0.1'),
    PUBLIC_BASE_URL: httpUrl.optional(),
    DATABASE_URL: optionalText.pipe(
      z
        .string()
        .regex(/^(postgres(ql)?:\/\/|memory:\/\/$)/, 'must be a postgres:// URL or memory://')
        .optional(),
    ),
    DATA_DIR: z.string().trim().min(1).default('./data'),
    REDIS_URL: optionalText.pipe(
      z
        .string()
        .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
        .optional(),
    ),
    ADMIN_API_KEY: optionalText.pipe(
      z.string().min(16, 'must be at least 16 characters long').optional(),
    ),
    SECRETS_KEY: secretsKey,
    SECRETS_KEY_PREVIOUS: secretsKey,
    TARGET_SECRETS_KEY: secretsKey,
    ADMIN_EMAIL: optionalText.pipe(emailAddress('must be an e-mail address').optional()),
    ADMIN_PASSWORD: optionalText.pipe(
      z.string().min(8, 'must be at least 8 characters long').optional(),
    ),
    SESSION_TTL_HOURS: integer(1, 168).default(12),
    DEFAULT_CHAT_QUOTA: integer(0, 2_000_000_000).default(1000),
    RATE_LIMIT_WINDOW_MS: integer(1, 86_400_000).default(60_000),
    RATE_LIMIT_PER_CHANNEL: integer(1).default(600),
    RATE_LIMIT_PER_IP: integer(1).default(1200),
    BODY_LIMIT: byteSize.default(bytes.parse('1mb') as number),
    DECODE_MEMORY_LIMIT: byteSize.default(bytes.parse('256mb') as number),
    AI_PROVIDER: z.enum(['echo', 'openai', 'anthropic']).default('echo'),
    AI_BASE_URL: optionalText.pipe(httpUrl.optional()),
    AI_API_KEY: optionalText,
    AI_MODEL: optionalText,
    AI_TIMEOUT_MS: integer(1, 600_000).default(30_000),
    AI_MAX_ATTEMPTS: integer(1, 100).default(5),
    AI_MAX_INPUT_CHARS: integer(100, 100_000_000).default(200_000),
    WORKER_CONCURRENCY: integer(1, 1000).default(8),
    WORKER_POLL_INTERVAL_MS: integer(10, 600_000).default(1000),
    WORKER_LEASE_MS: integer(1000, 3_600_000).optional(),
    WORKER_RETRY_BASE_MS: integer(0, 3_600_000).default(1000),
    WORKER_SHUTDOWN_GRACE_MS: integer(0, 600_000).default(10_000),
    SYNC_WAIT_MAX_S: integer(1, 3600).default(30),
    STREAMS_PER_KEY: integer(1, 100_000).default(10),
    DELIVERY_TIMEOUT_MS: integer(100, 600_000).default(15_000),
    DELIVERY_RETRY_SCHEDULE: durationList.default([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]),
    DELIVERY_ALLOW_PRIVATE: boolean.optional(),
    SLACK_API_URL: httpUrl.default('https://slack.com/api'),
    TELEGRAM_API_URL: httpUrl.default('https://api.telegram.org'),
    PROVIDERS_ALLOW_PRIVATE: boolean.optional(),
    TOOLS_ALLOW_PRIVATE: boolean.optional(),
    ATTACHMENTS_ALLOW_PRIVATE: boolean.optional(),
    ATTACHMENT_TIMEOUT_MS: integer(100, 600_000).default(10_000),
    ATTACHMENT_MAX_BYTES: byteSize.default(bytes.parse('5mb') as number),
    APPROVAL_TIMEOUT_S: integer(1, 31_536_000).default(86_400),
    ALLOW_PRIVATE_NETWORK: boolean.default(false),
    BODY_TIMEOUT_MS: integer(100, 600_000).default(30_000),
    SHUTDOWN_TIMEOUT_MS: integer(1000, 600_000).default(10_000),
    EVENT_RETENTION_DAYS: integer(0, 36_500).default(0),
    AUDIT_RETENTION_DAYS: integer(1, 36_500).default(365),
    ALERT_INTERVAL_S: integer(1, 86_400).default(15),
    METRICS_TOKEN: optionalText,
    ROLE: z.enum(['all', 'web', 'worker']).default('all'),
    TRUST_PROXY: boolean.default(false),
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(httpUrl.optional()),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.pipe(
      z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    ),
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
    OTEL_SERVICE_NAME: z.string().trim().min(1).default('hookprompt'),
    OTEL_RECORD_CONTENT: boolean.default(false),
    TRACE_URL_TEMPLATE: optionalText.pipe(
      z.string().includes('{trace_id}', { error: 'must contain {trace_id}' }).optional(),
    ),
    OIDC_ISSUER: oidcIssuer,
    OIDC_CLIENT_ID: optionalText,
    OIDC_CLIENT_SECRET: optionalText,
    OIDC_NAME: z.string().trim().min(1).max(60).default('SSO'),
    OIDC_ALLOWED_DOMAINS: domainList.default([]),
    OIDC_DEFAULT_ROLE: z.enum(['owner', 'editor', 'viewer']).default('viewer'),
    PASSWORD_LOGIN: boolean.default(true),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
  })
  .superRefine((env, ctx) => {
    // Anthropic's API has one address (the default) and always wants a key; OpenAI-compatible
    // servers are wherever the operator runs them, some without keys.
    const required = {
      echo: [],
      openai: ['AI_BASE_URL', 'AI_MODEL'],
      anthropic: ['AI_MODEL', 'AI_API_KEY'],
    } as const;
    for (const name of required[env.AI_PROVIDER]) {
      if (!env[name]) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `is required when AI_PROVIDER=${env.AI_PROVIDER}`,
        });
      }
    }
  })
  .superRefine((env, ctx) => {
    // A lease shorter than one AI call would let a second worker take an event still being answered.
    if (env.WORKER_LEASE_MS !== undefined && env.WORKER_LEASE_MS <= env.AI_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['WORKER_LEASE_MS'],
        message: 'must be greater than AI_TIMEOUT_MS',
      });
    }
  })
  .superRefine((env, ctx) => {
    if (env.ROLE === 'worker' && env.WORKER_PORT === undefined && env.PORT === 65535) {
      ctx.addIssue({
        code: 'custom',
        path: ['WORKER_PORT'],
        message: 'must be set when PORT is 65535 (its default is PORT + 1)',
      });
    }
  })
  .superRefine((env, ctx) => {
    if (Boolean(env.ADMIN_EMAIL) !== Boolean(env.ADMIN_PASSWORD)) {
      const missing = env.ADMIN_EMAIL ? 'ADMIN_PASSWORD' : 'ADMIN_EMAIL';
      ctx.addIssue({
        code: 'custom',
        path: [missing],
        message: 'must be set together with the other',
      });
    }
  })
  .superRefine((env, ctx) => {
    const set = OIDC_REQUIRED.filter((name) => env[name]);
    if (set.length === 0 || set.length === OIDC_REQUIRED.length) return;
    for (const name of OIDC_REQUIRED.filter((name) => !env[name]))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `must be set together with ${set.join(' and ')} (OpenID Connect sign-in needs ${OIDC_REQUIRED.join(', ')})`,
      });
  })
  .superRefine((env, ctx) => {
    // Without another way in, nobody could sign in to the panel.
    if (!env.PASSWORD_LOGIN && !env.OIDC_ISSUER)
      ctx.addIssue({
        code: 'custom',
        path: ['PASSWORD_LOGIN'],
        message: 'can be false only with OpenID Connect sign-in set up (OIDC_ISSUER and the rest)',
      });
  });

/**
 * A `*_ALLOW_PRIVATE` setting: its own value when it is set, else ALLOW_PRIVATE_NETWORK's (a
 * developer's machine, where every model, receiver and tool is on localhost). Each such setting
 * is read through here, so `false` set alone still wins.
 */
function privateAllowed(
  env: { ALLOW_PRIVATE_NETWORK: boolean },
  own: boolean | undefined,
): boolean {
  return own ?? env.ALLOW_PRIVATE_NETWORK;
}

/**
 * The configuration the rest of the service reads: the environment, parsed and renamed. The
 * `Config` type is derived from this mapping, so a new variable is added in two places only: the
 * schema above and here.
 */
const configSchema = envSchema.transform((e) => ({
  port: e.PORT,
  /** Where a `ROLE=worker` process listens, so that it runs beside a web one on one `.env`. */
  workerPort: e.WORKER_PORT ?? (e.PORT === 0 ? 0 : e.PORT + 1),
  host: e.HOST,
  publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`,
  /** A PostgreSQL URL, `memory://`, or undefined for the embedded database in `dataDir`. */
  databaseUrl: e.DATABASE_URL,
  dataDir: e.DATA_DIR,
  redisUrl: e.REDIS_URL,
  adminApiKey: e.ADMIN_API_KEY,
  /**
   * The keys of the secrets stored in the database, as hex (see src/secrets/): `key` seals them,
   * `previousKey` still opens what an earlier key sealed. Without `key` the embedded database
   * generates one; PostgreSQL stores secrets as they are. `targetKey` is read only by
   * `npm run admin -- copy-to`: it seals the copied secrets for the target's servers.
   */
  secrets: {
    key: e.SECRETS_KEY,
    previousKey: e.SECRETS_KEY_PREVIOUS,
    targetKey: e.TARGET_SECRETS_KEY,
  },
  admin:
    e.ADMIN_EMAIL && e.ADMIN_PASSWORD
      ? { email: e.ADMIN_EMAIL, password: e.ADMIN_PASSWORD }
      : undefined,
  /** A panel session ends after this many hours without use (and a week after sign-in at most). */
  sessionTtlHours: e.SESSION_TTL_HOURS,
  defaultChatQuota: e.DEFAULT_CHAT_QUOTA,
  rateLimit: {
    windowMs: e.RATE_LIMIT_WINDOW_MS,
    perChannel: e.RATE_LIMIT_PER_CHANNEL,
    perIp: e.RATE_LIMIT_PER_IP,
  },
  bodyLimitBytes: e.BODY_LIMIT,
  /**
   * What the decoders of compressed webhook bodies may hold at once; a body beyond it is answered
   * 503 with Retry-After (see hooks/decode-budget.ts).
   */
  decodeMemoryLimitBytes: e.DECODE_MEMORY_LIMIT,
  /** A webhook body still arriving this long after the request began is answered 408. */
  bodyTimeoutMs: e.BODY_TIMEOUT_MS,
  /** A process asked to stop has exited by then, whatever its dependencies do (non-zero if late). */
  shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  ai: {
    provider: e.AI_PROVIDER,
    baseUrl: e.AI_BASE_URL,
    apiKey: e.AI_API_KEY,
    model: e.AI_MODEL,
    timeoutMs: e.AI_TIMEOUT_MS,
    maxAttempts: e.AI_MAX_ATTEMPTS,
    /** What one call sends (system prompt, history, prompt) is cut to this many characters. */
    maxInputChars: e.AI_MAX_INPUT_CHARS,
    /**
     * Lets the providers a workspace adds reach loopback and private addresses (a model served
     * on the same host or network); the server's own AI_BASE_URL always may.
     */
    providersAllowPrivate: privateAllowed(e, e.PROVIDERS_ALLOW_PRIVATE),
  },
  workerConcurrency: e.WORKER_CONCURRENCY,
  /** How often an idle worker looks for due events when no notification wakes it. */
  workerPollIntervalMs: e.WORKER_POLL_INTERVAL_MS,
  /** How long a claimed event stays reserved for its worker; after that another worker may take it. */
  workerLeaseMs: e.WORKER_LEASE_MS ?? e.AI_TIMEOUT_MS + 30_000,
  /** First retry delay; each further retry doubles it (with jitter, at most one hour). */
  workerRetryBaseMs: e.WORKER_RETRY_BASE_MS,
  /** On shutdown, how long in-flight AI calls may finish before their events are released. */
  workerShutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS,
  /** The longest a sender's answer is held for `?wait=N` / `Prefer: wait=N` (seconds). */
  syncWaitMaxS: e.SYNC_WAIT_MAX_S,
  /** Live streams of Brain Logs one API key or panel session may hold open in this process. */
  streamsPerKey: e.STREAMS_PER_KEY,
  tools: {
    /** Lets the workspaces' tools (`http` and `mcp` URLs) reach loopback and private addresses. */
    allowPrivate: privateAllowed(e, e.TOOLS_ALLOW_PRIVATE),
    /** How long a call to a tool marked `approval: "always"` waits for a decision, then is denied. */
    approvalTimeoutS: e.APPROVAL_TIMEOUT_S,
  },
  /** Images of the payload the worker fetches and sends with the prompt (src/attachments/). */
  attachments: {
    /** One image's limit, from name resolution to its last byte, redirects included. */
    timeoutMs: e.ATTACHMENT_TIMEOUT_MS,
    /** An image larger than this is refused (no more than this is read). */
    maxBytes: e.ATTACHMENT_MAX_BYTES,
    /** Lets image URLs reach loopback and private addresses. */
    allowPrivate: privateAllowed(e, e.ATTACHMENTS_ALLOW_PRIVATE),
  },
  delivery: {
    /** One delivery attempt's limit, from name resolution to the end of the answer. */
    timeoutMs: e.DELIVERY_TIMEOUT_MS,
    /** The wait before each further attempt: n entries mean up to n + 1 attempts. */
    retryScheduleMs: e.DELIVERY_RETRY_SCHEDULE,
    /** Lets reply URLs reach loopback and private addresses (a receiver on the same host). */
    allowPrivate: privateAllowed(e, e.DELIVERY_ALLOW_PRIVATE),
    /** Slack's Web API (`chat.postMessage`), without a trailing slash; operator set, not SSRF-guarded. */
    slackApiUrl: e.SLACK_API_URL,
    /** Telegram's Bot API, without a trailing slash; operator set, not SSRF-guarded. */
    telegramApiUrl: e.TELEGRAM_API_URL,
  },
  /** Finished events received longer ago than this many days are deleted; 0 keeps them forever. */
  eventRetentionDays: e.EVENT_RETENTION_DAYS,
  /** Audit entries older than this many days are deleted (src/audit/audit-retention.ts). */
  auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  /** OpenTelemetry traces (src/tracing/); off when no endpoint is set. */
  tracing: {
    /** Where spans are sent: the traces endpoint as given, else the endpoint + `/v1/traces`. */
    tracesUrl:
      e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      (e.OTEL_EXPORTER_OTLP_ENDPOINT && `${e.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`),
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: e.OTEL_SERVICE_NAME,
    /** Spans may hold the payload, the prompt and the reply (never secrets or tokens). */
    recordContent: e.OTEL_RECORD_CONTENT,
  },
  /** When set, `GET /metrics` answers only requests with `Authorization: Bearer <token>`. */
  metricsToken: e.METRICS_TOKEN,
  /** Brain Logs links an event's trace here (`{trace_id}` filled in). */
  traceUrlTemplate: e.TRACE_URL_TEMPLATE,
  /** How often the processes running the worker check the alerts (one of them at a time). */
  alertIntervalMs: e.ALERT_INTERVAL_S * 1000,
  /** Sign-in with the company's identity provider (src/auth/oidc-*.ts); undefined when off. */
  oidc:
    e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET
      ? {
          issuer: e.OIDC_ISSUER,
          clientId: e.OIDC_CLIENT_ID,
          clientSecret: e.OIDC_CLIENT_SECRET,
          /** The button reads "Sign in with <name>". */
          name: e.OIDC_NAME,
          /** A new address of these domains gets an account at its first sign-in. */
          allowedDomains: e.OIDC_ALLOWED_DOMAINS,
          /** The role of such an account in the first workspace. */
          defaultRole: e.OIDC_DEFAULT_ROLE,
        }
      : undefined,
  /** The e-mail and password form of /login; the admin CLI sets passwords either way. */
  passwordLogin: e.PASSWORD_LOGIN,
  role: e.ROLE,
  trustProxy: e.TRUST_PROXY,
  logLevel: e.LOG_LEVEL,
}));

export type Config = DeepReadonly<z.output<typeof configSchema>>;
export type Role = Config['role'];
export type TracingSettings = Config['tracing'];

/** The port this process listens on, and the variable that sets it (for messages). */
export function listeningPort(config: Pick<Config, 'role' | 'port' | 'workerPort'>): {
  port: number;
  variable: 'PORT' | 'WORKER_PORT';
} {
  return config.role === 'worker'
    ? { port: config.workerPort, variable: 'WORKER_PORT' }
    : { port: config.port, variable: 'PORT' };
}

type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object ? DeepReadonly<T[K]> : T[K] };

/**
 * Parses an environment (a plain object, so tests need not touch process.env) into a frozen
 * Config. Every invalid variable is named in the error, one after the other, so a first start
 * shows all that needs fixing at once.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const problems = new Map<string, string>();
    for (const issue of result.error.issues) {
      const name = String(issue.path[0] ?? 'environment');
      if (!problems.has(name)) problems.set(name, describeProblem(name, issue.message, present));
    }
    throw new ConfigError([...problems.values()].join('; '));
  }
  return deepFreeze(result.data);
}

function describeProblem(
  name: string,
  message: string,
  env: Record<string, string | undefined>,
): string {
  // Values of secrets and URLs (which may carry passwords) are never echoed.
  const secret = /KEY|PASSWORD|TOKEN|SECRET|URL/.test(name);
  const given = env[name] === undefined || secret ? '' : ` (got ${JSON.stringify(env[name])})`;
  return `${name} ${message}${given}`;
}

/**
 * The one place that reads process.env. A `.env` file in the working directory (as
 * .env.example invites) fills in the variables the environment leaves unset: the environment wins.
 */
export function loadConfig(envFile = '.env'): Config {
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  return parseConfig(process.env);
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object') deepFreeze(inner);
  }
  return Object.freeze(value);
}
