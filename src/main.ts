import type { Server } from 'node:http';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createApp } from './app.js';
import { closeContext, createContext } from './context.js';

/** Entry point: config → context → app → listen; on SIGTERM/SIGINT, shut down in order. */
async function main(): Promise<void> {
  const config = readConfigOrExit();
  const ctx = await createContext(config);
  const app = createApp(ctx);
  const server = await listen(app, config);
  ctx.log.info({ port: config.port, host: config.host, role: config.role, database: ctx.db.kind }, 'hookprompt listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    // Stop accepting, let in-flight requests finish, then close the database they use.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await closeContext(ctx);
    ctx.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
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

function listen(app: ReturnType<typeof createApp>, config: Config): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(server)));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`hookprompt: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
