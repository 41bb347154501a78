import { describe, expect, it } from 'vitest';
import { useFixture } from '../support/harness.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const terminateListeners = (db: TestDatabase['db']) =>
  db.query(
    `select pg_terminate_backend(pid) from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`,
  );

function nextNotification(received: string[], matching: (payload: string) => boolean) {
  return new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = () => {
      if (received.some(matching)) return resolve();
      if (Date.now() > deadline)
        return reject(new Error(`not received: ${JSON.stringify(received)}`));
      setTimeout(check, 20);
    };
    check();
  });
}

// On PGlite the whole block is skipped, its database never made.
describe.skipIf(!testDatabaseUrl)('on real PostgreSQL', () => {
  const database = useFixture(() => createTestDatabase(), { stop: (started) => started.drop() });

  it('a LISTEN connection that is cut is opened again (real PostgreSQL only)', async () => {
    const { db } = database;
    const received: string[] = [];
    const unlisten = await db.listen('hookprompt_test', (payload) => received.push(payload));
    await db.query(`select pg_notify('hookprompt_test', 'before')`);
    await nextNotification(received, (p) => p === 'before');

    received.length = 0;
    await terminateListeners(db);
    // the listener is told it may have missed notifications once it listens again
    await nextNotification(received, (p) => p === '');
    await db.query(`select pg_notify('hookprompt_test', 'after')`);
    await nextNotification(received, (p) => p === 'after');
    expect(received.filter((p) => p === 'after')).toHaveLength(1);

    await unlisten();
    // a connection cut after it was given back must not be released twice (that would throw)
    await terminateListeners(db);
  });
});
