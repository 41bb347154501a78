import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { Driver } from '../support/driver.js';
import { runAdmin as admin } from '../support/admin-command.js';
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

/**
 * The database the command and the service share: PostgreSQL, or the embedded database in a
 * data directory, which one process at a time may open (closed while the command runs).
 */
const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-rotate-'));
let postgres: TestDatabase | undefined;
const target = {
  env: (): Record<string, string> =>
    postgres ? { DATABASE_URL: postgres.url as string } : { DATA_DIR: dataDir },
  async open(): Promise<TestDatabase> {
    if (testDatabaseUrl) return (postgres ??= await createTestDatabase());
    const db = await openPglite(dataDir);
    return { db, url: undefined, secretsKey: '', drop: () => db.close() };
  },
  async close(database: TestDatabase): Promise<void> {
    if (!testDatabaseUrl) await database.drop();
  },
};
afterAll(() => postgres?.drop());

async function storedValues(database: TestDatabase): Promise<string[]> {
  const { rows } = await database.db.query<Record<string, string | null>>(
    'select verification_secret, reply_secret, reply_previous_secret from channels order by id',
  );
  return rows.flatMap((row) => Object.values(row)).filter((v): v is string => v !== null);
}

it('npm run admin -- rotate-secrets encrypts every stored secret with SECRETS_KEY, reading the old ones with SECRETS_KEY_PREVIOUS', async () => {
  const [oldKey, key] = [newKey(), newKey()];
  let database = await target.open();
  let app: TestApp = await startTestApp({ database, env: { SECRETS_KEY: oldKey } });
  const driver = new Driver(app);
  const signed = await driver.createChannel({
    verification: { scheme: 'github', secret: github.secret },
    reply_delivery: { url: 'https://replies.example.com/hook' },
  });
  const firstReply = await driver.api('get', `/channels/${signed.id}/reply-secret`).expect(200);
  const rotated = await driver.api('post', `/channels/${signed.id}/reply-secret/rotate`);
  const replySecret = rotated.body.secret as string;
  await driver.createChannel({ verification: { scheme: 'github', secret: github.otherSecret } });
  const before = await storedValues(database);
  expect(before).toHaveLength(4);
  await app.close();
  await target.close(database);

  // A previous key that opens none of them: an error naming the first, and nothing changes.
  const wrong = await admin(['rotate-secrets'], {
    ...target.env(),
    SECRETS_KEY: key,
    SECRETS_KEY_PREVIOUS: newKey(),
  });
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(
    /hookprompt admin: channels\.verification_secret of row \d+ is encrypted with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS; nothing was changed/,
  );
  database = await target.open();
  expect(await storedValues(database)).toEqual(before);
  await target.close(database);

  const done = await admin(['rotate-secrets'], {
    ...target.env(),
    SECRETS_KEY: key,
    SECRETS_KEY_PREVIOUS: oldKey,
  });
  // The four above and the two channels' webhook tokens; the reply URL holds no secret.
  expect(done.stdout).toBe('Re-encrypted 6 stored secrets with SECRETS_KEY.\n');
  expect(done.code).toBe(0);
  for (const secret of [oldKey, key, github.secret, replySecret])
    expect(foundIn(done.stdout + wrong.stderr, secret)).toEqual([]);

  // The new key alone opens every secret now; the service runs on it without the old one.
  database = await target.open();
  const after = await storedValues(database);
  const byNewKey = new SecretBox(Buffer.from(key, 'hex'));
  expect(after.map((value) => byNewKey.open(value))).toEqual([
    github.secret,
    replySecret,
    firstReply.body.secret,
    github.otherSecret,
  ]);
  app = await startTestApp({ database, env: { SECRETS_KEY: key } });
  const body = JSON.stringify({ order: { id: 1 } });
  const headers = await github.sign(body, github.secret, nowSeconds());
  const url = `${app.baseUrl}${new URL(signed.webhook_url).pathname}`;
  expect((await new Driver(app).sendEvent(url, body, { headers })).status).toBe(200);
  const reply = await new Driver(app).api('get', `/channels/${signed.id}/reply-secret`);
  expect(reply.body.secret).toBe(replySecret);
  await app.close();
  await target.close(database);
}, 180_000);
