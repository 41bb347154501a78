import { randomBytes } from 'node:crypto';
import { startFakeAiServer, type FakeAiProtocol, type FakeAiServer } from './fake-ai-server.js';
import { startServer, type ServerProcess } from './server-process.js';
import { orderTemplate } from './payload.js';

/** High enough that no benchmark reaches them: the runs measure the receiver, not the limiter. */
const UNREACHABLE_RATE_LIMIT = '100000000';
/** The largest quota a workspace may have; the quota check and update still run on every event. */
const UNREACHABLE_QUOTA = 2_000_000_000;

export interface HookpromptOptions {
  name: string;
  /** How to run it: the compiled build (`dist/main.js`) or the sources through tsx. */
  entry: { nodeArgs: string[] };
  databaseUrl: string;
  logFile: string;
  /** Extra `node` flags, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  /** Environment on top of the benchmark's defaults (ROLE=web, AI_PROVIDER=echo, LOG_LEVEL=warn). */
  env?: Record<string, string>;
  /** Further channel settings (verification, dedup...) for the benchmark channel. */
  channel?: Record<string, unknown>;
  /** How long it may take to answer at all (default 30 s; sources through tsx on a busy machine take longer). */
  startWithinMs?: number;
}

export interface RunningHookprompt {
  server: ServerProcess;
  /** ADMIN_API_KEY: the management API of the default workspace (Brain Logs, channels). */
  apiKey: string;
  /** The webhook URL of a fresh channel whose workspace quota cannot run out. */
  webhookUrl: string;
}

/**
 * The environment every benchmark runs hookprompt with: ROLE=web, the echo provider,
 * LOG_LEVEL=warn, rate limits no run reaches; `env` on top. Further processes on the same
 * database (more web processes, a worker) are started with it too.
 */
export function hookpromptEnv(
  databaseUrl: string,
  apiKey: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    ADMIN_API_KEY: apiKey,
    ROLE: 'web',
    AI_PROVIDER: 'echo',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_CHANNEL: UNREACHABLE_RATE_LIMIT,
    RATE_LIMIT_PER_IP: UNREACHABLE_RATE_LIMIT,
    ...env,
  };
}

/** Starts hookprompt and, through its API as an admin would, creates a channel to post to. */
export async function startHookprompt(options: HookpromptOptions): Promise<RunningHookprompt> {
  const apiKey = randomBytes(24).toString('hex');
  const server = await startServer({
    name: options.name,
    nodeArgs: [...(options.nodeFlags ?? []), ...options.entry.nodeArgs],
    logFile: options.logFile,
    env: hookpromptEnv(options.databaseUrl, apiKey, options.env),
    startWithinMs: options.startWithinMs,
  });
  try {
    const api = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${server.origin}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    await api('PATCH', '/workspace', { chat_quota: UNREACHABLE_QUOTA });
    const channel = await api('POST', '/channels', {
      name: `bench ${options.name}`,
      template: orderTemplate,
      ...options.channel,
    });
    // Posted to directly, not through PUBLIC_BASE_URL, which the server was not told.
    const path = new URL(String(channel.webhook_url)).pathname;
    return { server, apiKey, webhookUrl: `${server.origin}${path}` };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * hookprompt receiving and answering (`ROLE=all`), its AI a fake model server (chat completions
 * or Anthropic's Messages API) that takes `aiDelayMs` per reply. The caller closes both.
 */
export async function startWithFakeAi(
  hookprompt: Omit<HookpromptOptions, 'env'>,
  aiDelayMs: number,
  workerConcurrency: number,
  protocol: FakeAiProtocol = 'openai',
): Promise<RunningHookprompt & { ai: FakeAiServer }> {
  const ai = await startFakeAiServer(aiDelayMs, protocol);
  try {
    const running = await startHookprompt({
      ...hookprompt,
      env: { ROLE: 'all', ...ai.env, WORKER_CONCURRENCY: String(workerConcurrency) },
    });
    return { ...running, ai };
  } catch (error) {
    // A listening fake would keep the benchmark's process alive after the error.
    await ai.close();
    throw error;
  }
}
