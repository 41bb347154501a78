import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';
import {
  freePort,
  startServerProcess,
  TSX_IMPORT,
  type ServerProcess,
} from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const servers: ServerProcess[] = [];
const databases: TestDatabase[] = [];
const taken: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop('SIGKILL');
  for (const database of databases.splice(0)) await database.drop();
  for (const server of taken.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A port some other program listens on. */
async function takenPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  taken.push(server);
  return (server.address() as { port: number }).port;
}

/** Two free ports in a row: PORT and its default WORKER_PORT. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && (await isFree(port + 1))) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TSX_IMPORT, join(projectRoot, 'src/main.ts')], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const limit = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code, stderr });
    });
  });
}

/**
 * The database a process would use, and how much is in it: the tables of an empty PostgreSQL
 * database, or the files in a new DATA_DIR for the embedded one.
 */
async function emptyDatabase(): Promise<{
  env: Record<string, string>;
  contents(): Promise<number>;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-port-'));
  if (!testDatabaseUrl)
    return { env: { DATA_DIR: dataDir }, contents: async () => readdirSync(dataDir).length };
  const database = await createTestDatabase({ migrated: false });
  databases.push(database);
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: database.url as string },
    async contents() {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(
          `select count(*)::int as n from information_schema.tables where table_schema = 'public'`,
        );
        return rows[0]?.n ?? -1;
      } finally {
        await client.end();
      }
    },
  };
}

describe('the port of each role', () => {
  it.each([
    ['web', 'PORT'],
    ['worker', 'WORKER_PORT'],
  ] as const)(
    'when taken, stops a %s process before migrating or creating anything (exit 1, naming %s)',
    async (role, variable) => {
      const port = await takenPort();
      const database = await emptyDatabase();
      const run = await runToExit({
        ...database.env,
        ROLE: role,
        PORT: String(role === 'web' ? port : await freePort()),
        ...(role === 'worker' ? { WORKER_PORT: String(port) } : {}),
        ADMIN_EMAIL: 'admin@localhost',
        ADMIN_PASSWORD: 'a password long enough',
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port} (${variable}) is already in use`);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      // no database made, no migration applied, so no admin either
      expect(await database.contents()).toBe(0);
    },
    40_000,
  );

  it('lets `npm start` and `npm run worker` run side by side on one .env (worker on PORT + 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookprompt-side-by-side-'));
    const port = await freePortPair();
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    if (database) databases.push(database);
    writeFileSync(
      join(dir, '.env'),
      [`PORT=${port}`, `DATABASE_URL=${database?.url ?? 'memory://'}`, 'ROLE=all'].join('\n'),
    );
    const main = [process.execPath, ...TSX_IMPORT, join(projectRoot, 'src/main.ts')] as [
      string,
      ...string[],
    ];
    servers.push(await startServerProcess({}, { command: main, cwd: dir, port }));
    // `npm run worker` sets ROLE=worker in the environment, which wins over the file
    servers.push(
      await startServerProcess({ ROLE: 'worker' }, { command: main, cwd: dir, port: port + 1 }),
    );
    const [web, worker] = servers;
    expect((await fetch(`${web?.baseUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${worker?.baseUrl}/readyz`)).status).toBe(200);
    // the worker serves operations only
    expect((await fetch(`${worker?.baseUrl}/api/v1/workspace`)).status).toBe(404);
    expect((await fetch(`${web?.baseUrl}/api/v1/workspace`)).status).toBe(401);
  }, 60_000);
});
