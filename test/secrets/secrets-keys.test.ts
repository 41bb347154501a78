import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { openPglite } from '../../src/db/pglite.js';
import { parseConfig } from '../../src/platform/config.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { createLogger } from '../../src/platform/logger.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';
import { foundIn } from './secret-forms.js';

const github = SIGNERS.find((signer) => signer.scheme === 'github') as (typeof SIGNERS)[number];
const newKey = () => randomBytes(32).toString('hex');

const apps: TestApp[] = [];
const databases: TestDatabase[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const database of databases.splice(0)) await database.drop();
});

async function start(database: TestDatabase, env: Record<string, string> = {}) {
  const app = await startTestApp({ database, env });
  apps.push(app);
  return app;
}

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

/** The embedded database in a data directory of its own, as `npm start` opens it. */
async function embeddedDatabase(dataDir: string): Promise<TestDatabase> {
  const db = await openPglite(dataDir);
  const database = { db, url: undefined, secretsKey: '', drop: () => db.close() };
  databases.push(database);
  return database;
}

/** A channel checking GitHub's signatures and replying somewhere: its reply secret. */
async function channelWithSecrets(app: TestApp) {
  const driver = new Driver(app);
  const channel = await driver.createChannel({
    verification: { scheme: 'github', secret: github.secret },
    reply_delivery: { url: 'https://replies.example.com/hook' },
  });
  const reply = await driver.api('get', `/channels/${channel.id}/reply-secret`).expect(200);
  return { channel, replySecret: reply.body.secret as string };
}

async function signedStatus(app: TestApp, channel: ChannelJson): Promise<number> {
  const body = JSON.stringify({ order: { id: 1 } });
  const headers = await github.sign(body, github.secret, nowSeconds());
  // The URL on this app: the channel may have been made by one that listened elsewhere.
  const url = `${app.baseUrl}${new URL(channel.webhook_url).pathname}`;
  return (await new Driver(app).sendEvent(url, body, { headers })).status;
}

async function storedSecrets(app: TestApp, channelId: string) {
  const { rows } = await app.ctx.db.query<Record<string, string | null>>(
    `select verification_secret, reply_secret, reply_previous_secret from channels where id = $1`,
    [channelId],
  );
  return rows[0] as Record<string, string | null>;
}

/** Starts a context on `database` with `env`, expecting the start to fail; its message. */
async function failedStart(database: TestDatabase, env: Record<string, string>) {
  const config = parseConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'hookprompt-')), ...env });
  const ctx = await createContext(config, { db: database.db, log: createLogger('silent') });
  const error = await ctx.start({ background: false }).then(
    () => undefined,
    (failure: unknown) => failure as Error,
  );
  await ctx.stop();
  if (!error) throw new Error('the start did not fail');
  return error.message;
}

describe('secrets stored before there was a key', () => {
  it('are encrypted at the next start with one, once, even when two processes start at once', async () => {
    const database = await freshDatabase();
    const first = await start(database);
    const { channel, replySecret } = await channelWithSecrets(first);
    const rotated = await new Driver(first)
      .api('post', `/channels/${channel.id}/reply-secret/rotate`)
      .expect(200);
    await first.close();
    apps.length = 0;
    // As a version without keys left them.
    await database.db.query(
      `update channels set verification_secret = $2, reply_secret = $3, reply_previous_secret = $4
       where id = $1`,
      [channel.id, github.secret, rotated.body.secret, replySecret],
    );

    // Two processes at once on PostgreSQL; the embedded database belongs to one process at a time.
    const [a, b] = testDatabaseUrl
      ? await Promise.all([start(database), start(database)])
      : [await start(database), await start(database)];
    const stored = await storedSecrets(a, channel.id);
    for (const value of Object.values(stored)) expect(value).toMatch(/^enc:v1:/);
    expect(a.ctx.secrets.open(stored.verification_secret ?? '')).toBe(github.secret);
    expect(a.ctx.secrets.open(stored.reply_previous_secret ?? '')).toBe(replySecret);
    const sealed = [...a.logs, ...b.logs].filter((line) => line.msg === 'stored secrets encrypted');
    expect(sealed.map((line) => line.sealed)).toEqual([3]);

    expect(await signedStatus(a, channel)).toBe(200);
    expect(await signedStatus(b, channel)).toBe(200);
    const reply = await new Driver(b).api('get', `/channels/${channel.id}/reply-secret`);
    expect(reply.body.secret).toBe(rotated.body.secret);
  }, 120_000);

  it.skipIf(!testDatabaseUrl)(
    'stay as they are on PostgreSQL without SECRETS_KEY, with one warning at each start',
    async () => {
      const database = await freshDatabase();
      const app = await start(database, { SECRETS_KEY: '' });
      const lines = app.logs.filter((line) => String(line.msg).includes('SECRETS_KEY'));
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          msg: expect.stringMatching(
            /^SECRETS_KEY is not set: secrets are stored in the database unencrypted/,
          ),
        }),
      ]);
      const { channel } = await channelWithSecrets(app);
      expect((await storedSecrets(app, channel.id)).verification_secret).toBe(github.secret);
      expect(await signedStatus(app, channel)).toBe(200);
    },
  );
});

describe('keys that do not open what is stored', () => {
  it('stop the start, naming the column and the row; SECRETS_KEY_PREVIOUS opens them', async () => {
    const database = await freshDatabase();
    const first = await start(database);
    const { channel } = await channelWithSecrets(first);
    await first.close();
    apps.length = 0;

    const other = newKey();
    const message = await failedStart(database, { SECRETS_KEY: other });
    expect(message).toMatch(
      /^channels\.\w+ of row \d+ is encrypted with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS; the start stopped/,
    );
    for (const key of [other, database.secretsKey]) expect(message).not.toContain(key);
    if (testDatabaseUrl) {
      expect(await failedStart(database, { SECRETS_KEY: '' })).toMatch(
        /^channels\.\w+ of row \d+ is encrypted, and SECRETS_KEY is not set; the start stopped \(set SECRETS_KEY/,
      );
    }

    // A new key, with the old one as the previous: what is stored opens, and new secrets are
    // sealed with the new key alone.
    const next = await start(database, {
      SECRETS_KEY: other,
      SECRETS_KEY_PREVIOUS: database.secretsKey,
    });
    expect(await signedStatus(next, channel)).toBe(200);
    const { channel: newer } = await channelWithSecrets(next);
    const { verification_secret: sealed } = await storedSecrets(next, newer.id);
    const newKeyOnly = new SecretBox(Buffer.from(other, 'hex'));
    expect(newKeyOnly.open(sealed ?? '')).toBe(github.secret);
  }, 120_000);
});

describe('the key of the embedded database', () => {
  it('is generated into DATA_DIR/secrets.key at the first start, readable by its owner only, and used from then on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-secrets-'));
    const keyFile = join(dataDir, 'secrets.key');
    let database = await embeddedDatabase(dataDir);
    const first = await start(database, { DATA_DIR: dataDir, SECRETS_KEY: '' });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8');
    expect(key).toMatch(/^[0-9a-f]{64}\n$/);
    expect(first.logs.filter((line) => line.path === keyFile).map((line) => line.msg)).toEqual([
      'generated the key of the stored secrets; back it up with the database',
    ]);
    const { channel, replySecret } = await channelWithSecrets(first);
    expect((await storedSecrets(first, channel.id)).verification_secret).toMatch(/^enc:v1:/);
    await first.close();
    apps.length = 0;
    await database.drop();
    databases.length = 0;

    database = await embeddedDatabase(dataDir);
    const again = await start(database, { DATA_DIR: dataDir, SECRETS_KEY: '' });
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(again.logs.some((line) => line.path === keyFile)).toBe(false);
    expect(await signedStatus(again, channel)).toBe(200);
    const reply = await new Driver(again).api('get', `/channels/${channel.id}/reply-secret`);
    expect(reply.body.secret).toBe(replySecret);
    for (const app of [first, again])
      expect(foundIn(app.logText(), key.trim()), 'key in the log').toEqual([]);
  }, 120_000);

  it('is a key of its own for memory://, kept in no file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-secrets-'));
    const db = await openPglite(undefined);
    const database = { db, url: undefined, secretsKey: '', drop: () => db.close() };
    databases.push(database);
    const app = await start(database, {
      DATA_DIR: dataDir,
      DATABASE_URL: 'memory://',
      SECRETS_KEY: '',
    });
    const { channel } = await channelWithSecrets(app);
    expect((await storedSecrets(app, channel.id)).verification_secret).toMatch(/^enc:v1:/);
    expect(await signedStatus(app, channel)).toBe(200);
    expect(existsSync(join(dataDir, 'secrets.key'))).toBe(false);
  }, 120_000);
});
