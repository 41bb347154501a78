import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useFakeAi } from '../support/harness.js';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startTestApp } from '../support/test-app.js';
import { adminQuery, databaseUrl, testDatabaseUrl } from '../support/test-database.js';
import { ADMIN_EMAIL, ADMIN_ENV, ADMIN_PASSWORD } from '../panel/panel-client.js';
import { canRunGuides, guideBlocks } from './guide-runner.js';

// docs/guides/postgresql-and-workers.md as a reader runs it: the move from the embedded database
// in its four commands (the page's own block, run by bash), then web and worker processes apart
// with the settings its first block says every process needs. The page's example host, user and
// database are replaced by this machine's PostgreSQL and a scratch database.

const PAGE = 'postgresql-and-workers.md';
const [settingsBlock, processesBlock, moveBlock] = guideBlocks(PAGE).map((block) => block.text);
const PAGE_URL = 'postgres://hookprompt@db.example.com:5432/hookprompt';

/** `NAME=value  # comment` lines of a block, as name → value. */
function assignments(block: string): Map<string, string> {
  return new Map(
    [...block.matchAll(/^([A-Z_]+)=(\S*)/gm)].map(([, name = '', value = '']) => [name, value]),
  );
}

/** `ROLE=web npm start   # …` → its environment and its command. */
function commandLine(line: string): { env: Record<string, string>; command: string[] } {
  const words = line.replace(/#.*$/, '').trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name = '', value = ''] = (words.shift() as string).split('=');
    env[name] = value;
  }
  return { env, command: words };
}

describe.skipIf(!testDatabaseUrl || !canRunGuides)(
  'the PostgreSQL guide, run as a reader runs it',
  () => {
    const ai = useFakeAi();
    const servers: ServerProcess[] = [];
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((server) => server.stop('SIGKILL')));
    });

    it('moves an embedded installation in four commands, then runs web and worker apart', async () => {
      // An installation on the embedded database: a channel, an API key, an event replied.
      const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-guide-embedded-'));
      const sourceKey = randomBytes(32).toString('hex');
      const embedded = await openPglite(dataDir);
      const before = await startTestApp({
        database: {
          db: embedded,
          url: undefined,
          secretsKey: sourceKey,
          drop: () => embedded.close(),
        },
        env: { ...ai.env(), ...ADMIN_ENV },
      });
      const driver = new Driver(before);
      const channel = await driver.createChannel({
        name: 'Orders',
        template: 'Order {{order.id}}',
      });
      const apiKey = (await driver.api('post', '/api-keys').send({ name: 'ops' }).expect(201)).body
        .key as string;
      expect((await driver.sendEvent(channel.webhook_url, { order: { id: 1 } })).status).toBe(200);
      await createWorker(before.ctx).runOnce();
      const [replied] = await driver.eventsOf(channel.id);
      expect(replied?.status).toBe('replied');
      await before.close();
      await embedded.close();

      // The page's four commands, on this machine's PostgreSQL, the server they start in the
      // background (`exec`: stopping it stops the server).
      const name = `hookprompt_guide_${randomBytes(4).toString('hex')}`;
      const target = databaseUrl(name);
      const host = new URL(testDatabaseUrl as string);
      // the page's random key, fixed here so the later processes can be given it
      const targetKey = randomBytes(32).toString('hex');
      const script = (moveBlock ?? '')
        .replace(
          'createdb -h db.example.com -U hookprompt hookprompt',
          () => `createdb -h ${host.hostname} -p ${host.port || 5432} -U ${host.username} ${name}`,
        )
        .replaceAll(PAGE_URL, target)
        .replace('$(openssl rand -hex 32)', targetKey)
        .replace(
          /SECRETS_KEY=\$TARGET_SECRETS_KEY npm start/,
          'SECRETS_KEY=$TARGET_SECRETS_KEY exec npm start',
        );
      expect(script).not.toContain('example.com');
      try {
        const port = await freePort();
        const moved = await startServerProcess(
          {
            DATA_DIR: dataDir,
            SECRETS_KEY: sourceKey,
            PORT: String(port),
            PUBLIC_BASE_URL: new URL(channel.webhook_url).origin,
            ...ai.env(),
          },
          { command: ['bash', '-euo', 'pipefail', '-c', script], port },
        );
        servers.push(moved);
        expect(moved.output()).toMatch(/channels\s+1 → 1/);

        // The same webhook URL, the same key, the event and its reply, on PostgreSQL.
        const origin = moved.baseUrl;
        const api = (path: string) =>
          fetch(`${origin}/api/v1${path}`, { headers: { Authorization: `Bearer ${apiKey}` } });
        const copied = (await (await api(`/channels/${channel.id}`)).json()) as Record<
          string,
          unknown
        >;
        expect(copied.webhook_url).toBe(channel.webhook_url);
        const event = (await (await api(`/events/${replied?.id}`)).json()) as Record<
          string,
          unknown
        >;
        expect(event).toMatchObject({ status: 'replied', reply: fakeReplyTo('Order 1') });
        await moved.stop();

        // Web and worker apart, each with the settings the page's first block names.
        const settings = assignments(settingsBlock ?? '');
        expect([...settings.keys()]).toEqual([
          'DATABASE_URL',
          'REDIS_URL',
          'SECRETS_KEY',
          'ADMIN_EMAIL',
          'ADMIN_PASSWORD',
          'ADMIN_API_KEY',
        ]);
        const shared = {
          DATABASE_URL: target,
          REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
          SECRETS_KEY: targetKey,
          ADMIN_EMAIL,
          ADMIN_PASSWORD,
          ADMIN_API_KEY: randomBytes(24).toString('hex'),
          PUBLIC_BASE_URL: new URL(channel.webhook_url).origin,
          ...ai.env(),
        };
        const lines = (processesBlock ?? '').trim().split('\n').map(commandLine);
        expect(lines.map((line) => line.command.join(' '))).toEqual([
          'npm start',
          'npm run worker',
        ]);
        const [webPort, workerPort] = [await freePort(), await freePort()];
        const started: ServerProcess[] = [];
        for (const { env, command } of lines) {
          const [program = 'npm', ...args] = command;
          const server = await startServerProcess(
            { ...shared, ...env, PORT: String(webPort), WORKER_PORT: String(workerPort) },
            // the worker answers /healthz on WORKER_PORT: there it is waited for
            { command: [program, ...args], port: env.ROLE === 'web' ? webPort : workerPort },
          );
          servers.push(server);
          started.push(server);
        }
        const [web] = started;
        const sent = await fetch(`${web?.baseUrl}${new URL(channel.webhook_url).pathname}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ order: { id: 2 } }),
        });
        expect(sent.status).toBe(200);
        const { event_id: eventId } = (await sent.json()) as { event_id: string };
        // the web process stores it; the worker answers it
        await eventually(async () => {
          const answer = await fetch(`${web?.baseUrl}/api/v1/events/${eventId}`, {
            headers: { Authorization: `Bearer ${shared.ADMIN_API_KEY}` },
          });
          return ((await answer.json()) as { status: string }).status === 'replied';
        });
      } finally {
        await Promise.all(servers.splice(0).map((server) => server.stop('SIGKILL')));
        await adminQuery(`drop database if exists ${name} with (force)`);
      }
    }, 240_000);
  },
);
