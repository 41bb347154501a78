import { afterEach, describe, expect, it } from 'vitest';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENERATED_ADMIN_EMAIL, INITIAL_PASSWORD_FILE } from '../../src/auth/first-admin.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import {
  ADMIN_EMAIL,
  ADMIN_ENV,
  ADMIN_PASSWORD,
  PanelClient,
  unescapeHtml,
} from '../panel/panel-client.js';

const opened: TestApp[] = [];
const databases: TestDatabase[] = [];

async function start(env: Record<string, string>, database?: TestDatabase): Promise<TestApp> {
  const app = await startTestApp({ env, database });
  opened.push(app);
  return app;
}

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

afterEach(async () => {
  for (const app of opened.splice(0)) await app.close();
  for (const database of databases.splice(0)) await database.drop();
});

/** The generated password, read from the file the service wrote in its DATA_DIR (if any). */
const generatedPassword = (app: TestApp): string[] => {
  const file = join(app.ctx.config.dataDir, INITIAL_PASSWORD_FILE);
  if (!existsSync(file)) return [];
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const password = readFileSync(file, 'utf8').trim();
  // the log says where the password is, never what it is
  expect(app.logText()).toContain(file);
  expect(app.logText()).not.toContain(password);
  return [password];
};

describe('the first admin', () => {
  it('is the one named by ADMIN_EMAIL/ADMIN_PASSWORD, in the default workspace', async () => {
    const app = await start(ADMIN_ENV, await freshDatabase());
    const client = new PanelClient(app);
    expect((await client.signIn()).status).toBe(303);
    const workspace = await client.page('/workspace');
    expect(workspace.text).toContain('Default workspace');
    expect(generatedPassword(app)).toEqual([]);
    expect(app.logText()).not.toContain(ADMIN_PASSWORD);
  });

  it('is created once: a later start with other settings adds nobody', async () => {
    const database = await freshDatabase();
    await start(ADMIN_ENV, database);
    const later = await start(
      { ADMIN_EMAIL: 'other@example.com', ADMIN_PASSWORD: 'another password' },
      database,
    );
    expect(
      (await new PanelClient(later).signIn('other@example.com', 'another password')).status,
    ).toBe(401);
    expect((await new PanelClient(later).signIn(ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(303);
  });

  it('without ADMIN_EMAIL gets a generated password, written once to a private file', async () => {
    const database = await freshDatabase();
    const app = await start({}, database);
    const passwords = generatedPassword(app);
    expect(passwords).toHaveLength(1);
    const password = passwords[0] as string;
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect((await new PanelClient(app).signIn(GENERATED_ADMIN_EMAIL, password)).status).toBe(303);

    const restarted = await start({}, database);
    expect(generatedPassword(restarted)).toEqual([]);
    expect((await new PanelClient(restarted).signIn(GENERATED_ADMIN_EMAIL, password)).status).toBe(
      303,
    );
  });

  it('can change the generated password, which signs out other sessions', async () => {
    const app = await start({}, await freshDatabase());
    const password = generatedPassword(app)[0] as string;
    const other = new PanelClient(app);
    await other.signIn(GENERATED_ADMIN_EMAIL, password);
    const client = new PanelClient(app);
    await client.signIn(GENERATED_ADMIN_EMAIL, password);

    const wrong = await client.form('/account/password', {
      current_password: 'nope',
      new_password: 'my own password',
      confirm_password: 'my own password',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('is not your current password');

    const res = await client.form('/account/password', {
      current_password: password,
      new_password: 'my own password',
      confirm_password: 'my own password',
    });
    expect(res.status).toBe(303);
    expect((await client.page('/account')).text).toContain('Password changed');
    expect((await other.page('/channels')).status).toBe(303);
    expect((await new PanelClient(app).signIn(GENERATED_ADMIN_EMAIL, password)).status).toBe(401);
    expect(
      (await new PanelClient(app).signIn(GENERATED_ADMIN_EMAIL, 'my own password')).status,
    ).toBe(303);
  });

  it('is not created by a worker-only process', async () => {
    const database = await freshDatabase();
    const worker = await start({ ROLE: 'worker' }, database);
    expect(generatedPassword(worker)).toEqual([]);
    const { rows } = await database.db.query('select 1 from admins');
    expect(rows).toEqual([]);
  });
});

describe('sign-in attempts', () => {
  it('are limited per address and e-mail after 10 failures, even with the right password', async () => {
    const app = await start(ADMIN_ENV, await freshDatabase());
    for (let i = 0; i < 10; i++) {
      expect((await new PanelClient(app).signIn(ADMIN_EMAIL, `wrong ${i}`)).status).toBe(401);
    }
    const blocked = await new PanelClient(app).signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.text).toContain('Too many failed sign-ins');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another e-mail address from the same sender is counted on its own.
    expect((await new PanelClient(app).signIn('someone@example.com', 'x')).status).toBe(401);
  });

  it('that succeed are not counted', async () => {
    const app = await start(ADMIN_ENV, await freshDatabase());
    for (let i = 0; i < 12; i++) expect((await new PanelClient(app).signIn()).status).toBe(303);
  });
});

describe('the generated password file', () => {
  it('is never overwritten: an admin created on a new database gets the password it holds', async () => {
    const first = await start({}, await freshDatabase());
    const password = generatedPassword(first)[0] as string;
    const file = join(first.ctx.config.dataDir, INITIAL_PASSWORD_FILE);
    const before = statSync(file).mtimeMs;

    // the database is replaced; DATA_DIR and its file stay
    const later = await start({ DATA_DIR: first.ctx.config.dataDir }, await freshDatabase());
    expect(readFileSync(file, 'utf8')).toBe(`${password}\n`);
    expect(statSync(file).mtimeMs).toBe(before);
    expect((await new PanelClient(later).signIn(GENERATED_ADMIN_EMAIL, password)).status).toBe(303);
  });

  it.each([['memory://'], ['postgres://elsewhere.example/hookprompt']])(
    'is not written for DATABASE_URL=%s, which does not live in DATA_DIR; an existing one is left alone',
    async (databaseUrl) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-keep-'));
      const file = join(dataDir, INITIAL_PASSWORD_FILE);
      writeFileSync(file, 'the password of the on-disk database\n', { mode: 0o600 });
      const database = await freshDatabase();
      const app = await start({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl }, database);
      expect(readFileSync(file, 'utf8')).toBe('the password of the on-disk database\n');
      expect(readdirSync(dataDir)).toEqual([INITIAL_PASSWORD_FILE]);
      const { rows } = await database.db.query('select 1 from admins');
      expect(rows).toEqual([]);
      expect(app.logText()).toContain('npm run admin -- set-password --create <email>');
    },
  );
});

describe('the sign-in page', () => {
  it('points at the log for the generated password, naming no path, and says how to set a lost one', async () => {
    const app = await start({}, await freshDatabase());
    const page = unescapeHtml((await new PanelClient(app).page('/login')).text);
    // The page is public: it tells visitors no folder of the server.
    expect(page).not.toContain(app.ctx.config.dataDir);
    expect(page).not.toContain(INITIAL_PASSWORD_FILE);
    expect(page).toContain(
      "whose password is in the file the server's log names at its first start",
    );
    expect(page).toContain('npm run admin -- set-password <email>');
  });

  it('names the command to create an admin when the database is not in DATA_DIR', async () => {
    const app = await start({ DATABASE_URL: 'memory://' }, await freshDatabase());
    const page = unescapeHtml((await new PanelClient(app).page('/login')).text);
    expect(page).not.toContain(INITIAL_PASSWORD_FILE);
    expect(page).toContain(
      'create one on the server with <code>npm run admin -- set-password --create <email></code>',
    );
  });
});
