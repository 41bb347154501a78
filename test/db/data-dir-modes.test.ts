import { lstatSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { Driver } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** Every entry under `dir`, with its permission bits, by its path inside `dir`. */
function modes(dir: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (path: string) => {
    const stats = lstatSync(path);
    found.set(relative(dir, path) || '.', stats.mode & 0o777);
    if (stats.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}

/** The entries that anyone but the owner may read, write or enter, as `mode path`. */
function openToOthers(dir: string): string[] {
  return [...modes(dir)]
    .filter(([, mode]) => (mode & 0o077) !== 0)
    .map(([path, mode]) => `${mode.toString(8)} ${path}`);
}

/** The service on the embedded database in `dataDir`, its key generated there, as `npm start` runs. */
async function serviceOn(dataDir: string): Promise<TestApp> {
  const db = await openPglite(dataDir);
  const app = await startTestApp({
    database: { db, url: undefined, secretsKey: '', drop: () => db.close() },
    env: { DATA_DIR: dataDir },
  });
  apps.push(app);
  return app;
}

/** Writes through the service: channels with secrets, events, their replies. */
async function writeSome(app: TestApp): Promise<void> {
  const driver = new Driver(app);
  const channel = await driver.createChannel({
    verification: { scheme: 'header-secret', header: 'x-key', secret: 'data-dir-modes-secret' },
  });
  for (let i = 0; i < 20; i++) {
    const res = await driver.sendEvent(channel.webhook_url, JSON.stringify({ order: { id: i } }), {
      headers: { 'x-key': 'data-dir-modes-secret' },
    });
    expect(res.status).toBe(200);
  }
  await app.ctx.worker?.runOnce();
  await app.ctx.db.query('checkpoint');
}

it("the embedded database's DATA_DIR is its user's alone: the directory 0700, no file readable by others, the WAL included", async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'hookprompt-modes-')), 'data');
  const app = await serviceOn(dataDir);
  await writeSome(app);

  const found = modes(dataDir);
  expect(found.get('.')).toBe(0o700);
  const wal = [...found.keys()].filter((path) => /^pg_wal\/[0-9A-F]{24}$/.test(path));
  expect(wal.length).toBeGreaterThan(0);
  for (const path of ['secrets.key', 'PG_VERSION', 'global/pg_control', 'pg_hba.conf', ...wal])
    expect(found.get(path), path).toBe(0o600);
  expect(openToOthers(dataDir)).toEqual([]);
  // And after it stopped (what PostgreSQL writes at shutdown).
  await apps.pop()?.close();
  expect(openToOthers(dataDir)).toEqual([]);
}, 120_000);

it('a data directory written before this rule is made private when the service opens it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-modes-'));
  // PGlite as it writes on its own: the cluster unpacked 0666, directories 0755.
  const before = await PGlite.create({ dataDir });
  await before.close();
  expect(openToOthers(dataDir).length).toBeGreaterThan(100);

  const app = await serviceOn(dataDir);
  expect(openToOthers(dataDir)).toEqual([]);
  await writeSome(app);
  expect(openToOthers(dataDir)).toEqual([]);
}, 120_000);
