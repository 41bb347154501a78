import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { canRunGuides, guideBlocks } from './guide-runner.js';

// docs/guides/upgrading.md's upgrade on one machine, as a reader runs it: its block, run by
// bash, on an embedded database a few migrations behind. This checkout is the new release, so
// `git pull` and `npm ci` have nothing to do here; the data folder is the test's own.

const [embeddedBlock = ''] = guideBlocks('upgrading.md').map((block) => block.text);
/** Migrations the old installation has not had. */
const BEHIND = 5;

let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
});

describe.skipIf(!canRunGuides)('the upgrading guide, run as a reader runs it', () => {
  it('backs up the data folder, applies the new migrations with npm run migrate, and starts', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'hookprompt-upgrade-')), 'data');
    const migrations = await readMigrations();
    const old = await openPglite(dataDir);
    await migrate(old, migrations.slice(0, -BEHIND));
    await old.close();

    const replaced: [string, string][] = [
      ['cp -a data data.backup', 'cp -a "$DATA_DIR" "$DATA_DIR.backup"'],
      ['git pull', ':'],
      ['npm ci', ':'],
      ['\nnpm start', '\nexec npm start'],
    ];
    let script = embeddedBlock;
    for (const [from, to] of replaced) {
      expect(script, `the page's "${from}"`).toContain(from);
      script = script.replace(from, to);
    }
    server = await startServerProcess(
      { DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      // migrating and then starting on the embedded database: slow on a busy machine
      { command: ['bash', '-euo', 'pipefail', '-c', script], answerWithinMs: 150_000 },
    );

    // npm run migrate applied the missing ones, before the server started on the new schema
    const applied = /"applied":(\[[^\]]*\])/.exec(server.output())?.[1];
    expect(JSON.parse(applied ?? '[]')).toEqual(
      migrations.slice(-BEHIND).map((migration) => migration.version),
    );
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    expect(existsSync(join(`${dataDir}.backup`, 'PG_VERSION'))).toBe(true);
    expect(await server.stop()).toBe(0);
  }, 240_000);
});
