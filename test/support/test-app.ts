import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createRequestListener } from '../../src/app.js';
import { parseConfig, type Config } from '../../src/platform/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { applyHttpLimits, CONNECTIONS_CHECK_MS } from '../../src/platform/http-limits.js';
import { createLogger } from '../../src/platform/logger.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export const TEST_ADMIN_KEY = 'test-admin-key-0123456789';

export interface TestApp {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  ctx: AppContext;
  database: TestDatabase;
  /** Every log line the app wrote, as parsed JSON. */
  logs: Record<string, unknown>[];
  /** The raw log text, for checking that secrets never appear in it. */
  logText(): string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment variables on top of the test defaults. */
  env?: Record<string, string>;
  /** Share a database between apps (several instances on one database). */
  database?: TestDatabase;
  /** Hook to add routes or start features before the server takes requests. */
  setup?: (ctx: AppContext, config: Config) => void | Promise<void>;
}

/** A real listening HTTP server on a fresh database, with the log captured. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const server = createServer({ connectionsCheckingInterval: CONNECTIONS_CHECK_MS });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const config = parseConfig({
    // each app has a data directory of its own (the first admin's password may be written there)
    DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-test-')),
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: 'info',
    // the apps on one database share the key of its secrets
    SECRETS_KEY: database.secretsKey,
    ...options.env,
  });
  const ctx = await createContext(config, {
    db: database.db,
    log: createLogger(config.logLevel, sink),
  });
  // Tests drive the worker with runOnce() themselves: no background work.
  await ctx.start({ background: false });
  applyHttpLimits(server, config);
  await options.setup?.(ctx, config);
  server.on('request', createRequestListener(ctx));

  return {
    baseUrl,
    ctx,
    database,
    get logs() {
      return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    logText: () => lines.join('\n'),
    async close() {
      await closeServer(server);
      await ctx.stop();
      if (ownsDatabase) await database.drop().catch(() => undefined);
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
