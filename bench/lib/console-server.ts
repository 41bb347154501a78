import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../test/support/eventually.js';
import {
  FakeAiServer,
  type FakeReply,
  type RecordedRequest,
} from '../../test/support/fake-ai-server.js';
import { ReplyReceiver } from '../../test/support/reply-receiver.js';
import { hookpromptEnv } from './hookprompt.js';
import { createScratchDatabase } from './scratch-database.js';
import { startServer, type ServerProcess } from './server-process.js';

/**
 * What a browser measure starts and must end however it ends: cleanups run newest first on
 * success, failure, Ctrl-C or a stray rejection; child processes still running are killed when
 * this process exits.
 */
export interface RunScope {
  cleanups: (() => Promise<unknown>)[];
  children: Set<number>;
  cleanUp(): Promise<void>;
}

export function createRunScope(): RunScope {
  const cleanups: (() => Promise<unknown>)[] = [];
  const children = new Set<number>();
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse())
      await cleanup().catch((error: unknown) => console.error(error));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  // A failure outside the awaited path (a stray rejection of a browser callback) ends the run too.
  process.once('unhandledRejection', (error) => {
    console.error(error);
    void cleanUp().finally(() => process.exit(1));
  });
  process.once('exit', () => {
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return { cleanups, children, cleanUp };
}

export interface ConsoleServerOptions {
  /** Names the data folder and the server's log file (`$TMPDIR/hookprompt-<name>.log`). */
  name: string;
  admin: { email: string; password: string };
  modelReply: (request: RecordedRequest) => FakeReply;
  /** How many 500s the failing reply URL answers before it would answer 200. */
  failingReplies: number;
  /** A PostgreSQL server to make a scratch database on; the embedded database when unset. */
  postgresUrl?: string;
}

export interface ConsoleServer {
  server: ServerProcess;
  apiKey: string;
  okUrl: string;
  failingUrl: string;
  databaseLabel: string;
}

/**
 * hookprompt from the sources (ROLE=all) with a fake model, two loopback reply receivers (one
 * answering 500) and an admin from ADMIN_EMAIL / ADMIN_PASSWORD, ready to be seeded.
 */
export async function startConsoleServer(
  scope: RunScope,
  options: ConsoleServerOptions,
): Promise<ConsoleServer> {
  const { cleanups, children } = scope;
  const ai = await FakeAiServer.start();
  cleanups.push(() => ai.close());
  ai.defaultReply = options.modelReply;
  const ok = await ReplyReceiver.start();
  cleanups.push(() => ok.close());
  const failing = await ReplyReceiver.start();
  cleanups.push(() => failing.close());
  failing.enqueue(...Array.from({ length: options.failingReplies }, () => ({ status: 500 })));

  let databaseUrl = '';
  let databaseLabel = 'embedded PGlite in a fresh DATA_DIR';
  const dataDir = await mkdtemp(join(tmpdir(), `hookprompt-${options.name}-data-`));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  if (options.postgresUrl) {
    const scratch = await createScratchDatabase(options.postgresUrl, options.name);
    cleanups.push(() => scratch.drop());
    databaseUrl = scratch.url;
    databaseLabel = `PostgreSQL (scratch database ${scratch.name})`;
  }

  const apiKey = randomBytes(24).toString('hex');
  const logFile = join(tmpdir(), `hookprompt-${options.name}.log`);
  await writeFile(logFile, '');
  const server = await startServer({
    name: 'hookprompt',
    nodeArgs: ['--import', 'tsx', 'src/main.ts'],
    logFile,
    // Compiling the sources and preparing a new embedded database take a while on a busy machine.
    startWithinMs: 120_000,
    env: hookpromptEnv(databaseUrl, apiKey, {
      ROLE: 'all',
      ...ai.env(),
      // A model with a price, so the list's cost column is filled.
      AI_MODEL: 'gpt-4o-mini',
      AI_MAX_ATTEMPTS: '2',
      WORKER_RETRY_BASE_MS: '20',
      WORKER_POLL_INTERVAL_MS: '100',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: options.admin.email,
      ADMIN_PASSWORD: options.admin.password,
      DELIVERY_ALLOW_PRIVATE: 'true',
      // Three attempts, then the 500s are a failed delivery.
      DELIVERY_RETRY_SCHEDULE: '20ms,20ms',
      ALERT_INTERVAL_S: '1',
    }),
  });
  children.add(server.pid);
  cleanups.push(async () => {
    await server.stop();
    children.delete(server.pid);
  });
  // startServer returns once /readyz answers anything but 503; the database is ready at 200.
  await eventually(async () => (await fetch(`${server.origin}/readyz`)).status === 200, {
    timeoutMs: 60_000,
    what: 'hookprompt to be ready',
  });
  return { server, apiKey, okUrl: ok.url(''), failingUrl: failing.url(''), databaseLabel };
}
