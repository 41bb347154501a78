import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
});

// SHUTDOWN_TIMEOUT_MS's default: a stopped process has let go of its port by then.
const GRACE_MS = 10_000;

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function waitForFreePort(port: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if (await portIsFree(port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return portIsFree(port);
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'ends, with the server, on %s sent to the npm process itself',
    async (signal) => {
      const port = await freePort();
      server = await startServerProcess(
        { DATABASE_URL: 'memory://', PORT: String(port), LOG_LEVEL: 'info' },
        { command: ['npm', 'start'], cwd: projectRoot },
      );
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);

      const sent = Date.now();
      server.child.kill(signal);
      await server.exited;
      expect(await waitForFreePort(port, sent + GRACE_MS), 'the port is free again').toBe(true);
      expect(Date.now() - sent).toBeLessThan(GRACE_MS);
      expect(server.output()).toContain('"msg":"stopped"');
    },
    30_000,
  );
});

describe('start-up configuration', () => {
  it('reads .env from the working directory; variables set in the environment win', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookprompt-dotenv-'));
    const port = await freePort();
    writeFileSync(
      join(dir, '.env'),
      [
        '# as copied from .env.example',
        `PORT=${port}`,
        'DATABASE_URL=memory://',
        'ADMIN_API_KEY=key-from-the-dot-env-file',
        'LOG_LEVEL=info',
      ].join('\n'),
    );
    server = await startServerProcess(
      { ADMIN_API_KEY: 'key-from-the-environment', LOG_LEVEL: 'warn' },
      {
        command: [process.execPath, ...TSX_IMPORT, join(projectRoot, 'src/main.ts')],
        cwd: dir,
        port,
      },
    );
    const workspace = (key: string) =>
      fetch(`${server?.baseUrl}/api/v1/workspace`, { headers: { Authorization: `Bearer ${key}` } });
    expect((await workspace('key-from-the-environment')).status).toBe(200);
    expect((await workspace('key-from-the-dot-env-file')).status).toBe(401);
    // PORT and DATABASE_URL came from the file; LOG_LEVEL=warn from the environment hides info lines
    expect(server.output()).not.toContain('hookprompt listening');
  }, 30_000);
});
