import { join } from 'node:path';
import { startHookprompt } from './hookprompt.js';
import { startServer, type ServerProcess } from './server-process.js';

export interface RunningTarget {
  server: ServerProcess;
  /** Where webhooks are posted. */
  url: string;
  /** Who signs each request (a signed channel's sender); none when absent. */
  sender?: RequestSigner;
  /** hookprompt's ADMIN_API_KEY (baselines have no API). */
  apiKey?: string;
}

export interface Target {
  /** Short name used in tables and options: ours, a, a+q, b, c. */
  key: string;
  label: string;
  start(databaseUrl: string, logFile: string): Promise<RunningTarget>;
}

const baselinesDir = join(import.meta.dirname, '..', 'baselines');

function baseline(
  key: string,
  label: string,
  file: string,
  env: Record<string, string> = {},
): Target {
  return {
    key,
    label,
    async start(databaseUrl, logFile) {
      const server = await startServer({
        name: label,
        // Loaded through tsx: it transforms the file once at start-up and adds nothing per request.
        nodeArgs: ['--import', 'tsx', join(baselinesDir, file)],
        env: { NODE_ENV: 'production', DATABASE_URL: databaseUrl, ...env },
        logFile,
      });
      return { server, url: `${server.origin}/hooks/baseline` };
    },
  };
}

export const baselines: Target[] = [
  baseline('c', '(c) node:http hello', 'node-hello.ts'),
  baseline('b', '(b) express, no db', 'express-echo.ts'),
  baseline('a', '(a) express + insert', 'express-insert.ts'),
  baseline('a+q', '(a+q) a + hot quota row', 'express-insert.ts', { BASELINE_QUOTA: 'on' }),
];

/**
 * hookprompt's receiver, run from `nodeArgs` (the build or the sources), with extra environment;
 * its channel has the sender's settings, then `channel`'s.
 */
export function hookpromptTarget(
  key: string,
  label: string,
  nodeArgs: string[],
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
  sender?: BenchSender,
  channel?: Record<string, unknown>,
): Target {
  return {
    key,
    label,
    async start(databaseUrl, logFile) {
      const { server, webhookUrl, apiKey } = await startHookprompt({
        name: label,
        entry: { nodeArgs },
        databaseUrl,
        logFile,
        env,
        nodeFlags,
        channel: sender || channel ? { ...sender?.channel, ...channel } : undefined,
      });
      return { server, url: webhookUrl, sender, apiKey };
    },
  };
}

/** What adds headers of its own to every request (a signature, a unique delivery id). */
export interface RequestSigner {
  /** Makes the headers of the next `count` requests ahead of a run. */
  prepare(count: number): void;
  /** The next request's own header lines, each `name: value\r\n`. */
  headerLines(): string;
}

/** A sender with its own channel settings, and the headers it adds to every request. */
export interface BenchSender extends RequestSigner {
  channel: Record<string, unknown>;
}
