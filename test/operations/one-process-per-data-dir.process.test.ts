import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';
import {
  freePort,
  startServerProcess,
  TSX_IMPORT,
  type ServerProcess,
} from '../support/server-process.js';
import { createTestDatabase, testDatabaseUrl } from '../support/test-database.js';

const API_KEY = 'one-process-admin-key-0123456789';
const RUN_LIMIT_MS = 30_000;

interface Run {
  code: number | null;
  stderr: string;
  ms: number;
}

/** Runs one of the project's programs to its end, as `npm start`/`run …` would. */
function runToExit(program: string, args: string[], env: Record<string, string>): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TSX_IMPORT, join(projectRoot, program), ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // One that does not end (a second server that took the database) is ended here.
    const limit = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code, stderr, ms: Date.now() - started });
    });
    child.stdin.end('a password long enough\n');
  });
}

const servers: ServerProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop('SIGKILL');
});

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServerProcess({ ADMIN_API_KEY: API_KEY, ...env });
  servers.push(server);
  return server;
}

const api = (server: ServerProcess, path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}/api/v1${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
  });

async function channelNames(server: ServerProcess): Promise<string[]> {
  const res = await api(server, '/channels');
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { name: string }[] };
  return body.data.map((channel) => channel.name);
}

describe('the embedded database in DATA_DIR', () => {
  it('belongs to one process: any second one exits at once, naming the directory and the holder', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-one-process-'));
    const first = await serve({ DATA_DIR: dataDir });
    const created = await api(first, '/channels', {
      method: 'POST',
      body: JSON.stringify({ name: 'Kept', template: 'Order {{id}}' }),
    });
    expect(created.status).toBe(201);
    const { webhook_url } = (await created.json()) as { webhook_url: string };

    const env = { DATA_DIR: dataDir, ADMIN_API_KEY: API_KEY };
    const seconds = await Promise.all([
      runToExit('src/main.ts', [], { ...env, PORT: String(await freePort()) }),
      runToExit('src/main.ts', [], {
        ...env,
        ROLE: 'worker',
        PORT: String(await freePort()),
        WORKER_PORT: String(await freePort()),
      }),
      runToExit('src/db/migrate-cli.ts', [], env),
      runToExit('src/auth/admin-cli.ts', ['set-password', '--create', 'x@example.com'], env),
    ]);
    for (const second of seconds) {
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toContain(dataDir);
      expect(second.stderr).toContain(`PID ${first.child.pid}`);
    }

    // the first goes on, with what it held
    expect(await channelNames(first)).toEqual(['Kept']);
    const hook = await fetch(webhook_url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"id": 7}',
    });
    expect(hook.status).toBe(200);
    expect(first.child.exitCode).toBeNull();
    expect(first.output()).not.toMatch(/error/i);
  }, 90_000);

  it('is not kept from the next start by the lock of a killed process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-killed-'));
    const first = await serve({ DATA_DIR: dataDir });
    const created = await api(first, '/channels', {
      method: 'POST',
      body: JSON.stringify({ name: 'Survives', template: 'Order {{id}}' }),
    });
    expect(created.status).toBe(201);
    await first.stop('SIGKILL');

    const next = await serve({ DATA_DIR: dataDir });
    expect(await channelNames(next)).toEqual(['Survives']);
    const migrated = await runToExit('src/db/migrate-cli.ts', [], { DATA_DIR: dataDir });
    expect(migrated.code).toBe(1);
    expect(migrated.stderr).toContain(`PID ${next.child.pid}`);
  }, 90_000);

  it('is all that is locked: processes on memory:// or PostgreSQL share a DATA_DIR', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-shared-dir-'));
    const database = testDatabaseUrl ? await createTestDatabase() : undefined;
    try {
      const databaseUrl = database?.url ?? 'memory://';
      const both = await Promise.all([
        serve({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl }),
        serve({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ROLE: 'worker' }),
      ]);
      for (const server of both) expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      for (const server of servers.splice(0)) await server.stop('SIGKILL');
      await database?.drop();
    }
  }, 90_000);
});
