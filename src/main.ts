// First: V8's flags apply to what is allocated after them.
import './platform/v8-flags.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpsApp, createRequestListener } from './app.js';
import { ConfigError, loadConfig, type Config } from './platform/config.js';
import { createContext } from './context.js';
import { listenFirst, PortError, type HttpServer } from './platform/http-server.js';
import { shutdownBudget, startShutdownDeadline } from './platform/shutdown.js';
import { firstRunGuide } from './auth/first-run.js';
import { logToStandardOutput } from './platform/log-output.js';

/** The most a stopping process waits for a slow reader to take its last log lines. */
const LAST_LINES_MS = 1000;

/**
 * Entry point: config → listen → context → start → serve → signals. The port is taken first,
 * so a port in use stops start-up before anything is migrated, created or started. On
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then stop the context (worker,
 * retention, database). A ROLE=worker process listens on WORKER_PORT and serves only /healthz,
 * /readyz and /metrics.
 */
async function main(): Promise<void> {
  const config = readConfigOrExit();
  const http = await listenOrExit(config);
  const { server } = http;
  const ctx = await createContext(config);
  try {
    await ctx.start();
  } catch (error) {
    await ctx.stop().catch(() => undefined);
    throw error;
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    // From here the process ends within SHUTDOWN_TIMEOUT_MS, whatever its dependencies do.
    const { step, msLeft } = startShutdownDeadline(ctx.log, config.shutdownTimeoutMs);
    // Held answers (`?wait=N`) would keep their requests open past the grace period.
    ctx.answers.cutWaitsShort();
    // Live tails (Server-Sent Events) stay open until ended; clients reconnect elsewhere.
    ctx.eventsFeed.endStreams();
    await step('requests in flight', () =>
      stopAccepting(server, shutdownBudget(config.shutdownTimeoutMs).drainMs),
    );
    await ctx.stop(step);
    ctx.log.info('stopped');
    // process.exit() drops the lines a pipe has not taken yet.
    await logToStandardOutput().drained(Math.min(LAST_LINES_MS, msLeft()));
    process.exit(0);
  };
  // Before the first request is served: a signal that comes as soon as /readyz answers (a
  // supervisor, a test) ends the process the graceful way, not by the signal's default.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  http.serve(config.role === 'worker' ? createOpsApp(ctx) : createRequestListener(ctx));
  const { port } = server.address() as AddressInfo;
  // For a person at a terminal, not for the log: plain text, printed before the line below
  // (through the log's output, so that it never holds the process either).
  const guide = await firstRunGuide(ctx, port);
  if (guide) logToStandardOutput().write(guide);
  ctx.log.info(
    { port, host: config.host, role: config.role, database: ctx.db.kind },
    'hookprompt listening',
  );
}

function readConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hookprompt: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Resolves once every in-flight request has been answered (or the grace period is over). */
function stopAccepting(server: Server, graceMs: number): Promise<void> {
  // A busy keep-alive connection never becomes idle, so close() would wait for it forever:
  // from now on every answer tells the client to close its connection.
  server.prependListener('request', (_req, res) => res.setHeader('Connection', 'close'));
  return new Promise((resolve) => {
    const deadline = setTimeout(() => server.closeAllConnections(), graceMs).unref();
    server.close(() => {
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function listenOrExit(config: Config): Promise<HttpServer> {
  try {
    return await listenFirst(config);
  } catch (error) {
    if (error instanceof PortError) {
      process.stderr.write(`hookprompt: cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `hookprompt: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
