import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';
import { PanelClient } from '../panel/panel-client.js';
import {
  ADMIN_COMMAND as CLI,
  runAdmin as admin,
  type AdminRun as Run,
} from '../support/admin-command.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, testDatabaseUrl } from '../support/test-database.js';

/** The same at a terminal (a pseudo-terminal made by `script`), where a password is generated. */
function adminAtTerminal(args: string[], env: Record<string, string>): Promise<Run> {
  const command = [process.execPath, ...CLI, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr: stdout }));
  });
}

const servers: ServerProcess[] = [];
const apps: TestApp[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const app of apps.splice(0)) await app.close();
});

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServerProcess(env);
  servers.push(server);
  return server;
}

const signIn = (baseUrl: string, email: string, password: string) =>
  new PanelClient({ baseUrl } as TestApp).signIn(email, password).then((res) => res.status);

describe('npm run admin -- set-password <email>', () => {
  it('creates or resets an admin on the embedded database the server uses', async () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-admin-cli-')) };

    const created = await admin(
      ['set-password', 'ops@example.com', '--create'],
      env,
      'first password\n',
    );
    expect(created.stderr).toContain(
      'Created the panel admin ops@example.com in Default workspace',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toBe('');

    let server = await serve(env);
    const ops = new PanelClient({ baseUrl: server.baseUrl } as TestApp);
    expect((await ops.signIn('ops@example.com', 'first password')).status).toBe(303);
    // an owner of the workspace, with the owner's forms
    const workspace = (await ops.page('/workspace')).text;
    expect(workspace).toContain('data-admin="ops@example.com" data-role="owner"');
    expect(workspace).toContain('action="/workspace/api-keys"');
    await server.stop();

    // at a terminal, a password is generated and printed once
    const reset = await adminAtTerminal(['set-password', 'OPS@example.com'], env);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('Set a new password for ops@example.com');
    const lines = reset.stdout.split(/\r?\n/);
    const password = lines[lines.findIndex((l) => l.includes('shown only now')) + 1] ?? '';
    expect(password).toMatch(/^[\w-]{24}$/);

    server = await serve(env);
    expect(await signIn(server.baseUrl, 'ops@example.com', 'first password')).toBe(401);
    expect(await signIn(server.baseUrl, 'ops@example.com', password)).toBe(303);
  }, 60_000);

  it('creates an admin only with --create, written before or after the address', async () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-admin-cli-')) };

    const refused = await admin(['set-password', 'typo@example.com'], env, 'a new password\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'no panel admin has the address typo@example.com; add --create to create one',
    );

    const created = await admin(['set-password', '--create', 'admin@localhost'], env, 'password 1');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(
      'Created the panel admin admin@localhost in Default workspace',
    );
    const reset = await admin(['set-password', 'admin@localhost'], env, 'password 2');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain('Set a new password for admin@localhost');

    const server = await serve(env);
    expect(await signIn(server.baseUrl, 'typo@example.com', 'a new password')).toBe(401);
    expect(await signIn(server.baseUrl, 'admin@localhost', 'password 1')).toBe(401);
    expect(await signIn(server.baseUrl, 'admin@localhost', 'password 2')).toBe(303);
  }, 60_000);

  it('explains what is wrong with its arguments or the password', async () => {
    const env = { DATABASE_URL: 'memory://' };
    // Five separate runs, at once: each only reads its arguments and input.
    const [usage, unknown, help, email, short] = await Promise.all([
      admin([], env),
      admin(['set-password', '--force', 'a@example.com'], env),
      admin(['--help'], env),
      admin(['set-password', 'not-an-address'], env, 'long enough password'),
      admin(['set-password', 'a@example.com'], env, 'short\n'),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: npm run admin -- set-password [--create] <email>');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('usage: npm run admin -- set-password [--create] <email>');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--create');
    expect(email.code).toBe(1);
    expect(email.stderr).toContain('"not-an-address" is not an e-mail address');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('at least 8 characters');
  }, 60_000);

  it.skipIf(!testDatabaseUrl)(
    'resets a password on PostgreSQL while the server runs, signing the admin out',
    async () => {
      const database = await createTestDatabase();
      const app = await startTestApp({
        database,
        env: { ADMIN_EMAIL: 'lead@example.com', ADMIN_PASSWORD: 'forgotten password' },
      });
      apps.push(app);
      try {
        const session = new PanelClient(app);
        expect((await session.signIn('lead@example.com', 'forgotten password')).status).toBe(303);

        const run = await admin(
          ['set-password', 'lead@example.com'],
          { DATABASE_URL: database.url as string },
          'remembered password',
        );
        expect(run.code, run.stderr).toBe(0);
        expect((await session.page('/channels')).status).toBe(303);
        expect(await signIn(app.baseUrl, 'lead@example.com', 'forgotten password')).toBe(401);
        expect(await signIn(app.baseUrl, 'lead@example.com', 'remembered password')).toBe(303);
      } finally {
        await app.close();
        apps.splice(0);
        await database.drop();
      }
    },
    30_000,
  );
});
