import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import {
  canStartPostgres,
  startTempPostgres,
  type TempPostgres,
} from '../support/temp-postgres.js';

/**
 * PostgreSQL killed (`pg_ctl stop -m immediate`) while statements run: its backends vanish
 * without a word, and each connection in use sees its socket close. That must fail the
 * statement, never the process: an 'error' event no one listens to would end it (the pool
 * listens only to idle connections). Vitest fails the run on such an error.
 */
describe.skipIf(!canStartPostgres)('a connection lost while its statement runs', () => {
  let temp: TempPostgres | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close().catch(() => undefined);
    temp?.destroy();
    db = temp = undefined;
  });

  it('fails the statement (with a deadline or in a transaction), and the pool recovers', async () => {
    temp = await startTempPostgres();
    const lost: string[] = [];
    db = openPostgres({ url: temp.url, onError: (error) => lost.push(error.message) });
    await db.query('select 1');

    const deadline = Date.now() + 30_000;
    const withDeadline = db.query('select pg_sleep(20)', [], { deadline });
    const inTransaction = db.transaction((tx) => tx.query('select pg_sleep(20)'), { deadline });
    const failures = Promise.allSettled([withDeadline, inTransaction]);
    await waitForRunning(temp.url, 2);
    temp.stop();

    const settled = await failures;
    expect(settled.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(lost).toContain('Connection terminated unexpectedly');

    temp.start();
    await expect(untilAnswered(db)).resolves.toEqual([{ answer: 1 }]);
  });
});

/** Polls (bounded) until `count` backends run pg_sleep: both statements have been sent. */
async function waitForRunning(url: string, count: number): Promise<void> {
  const watcher = openPostgres({ url, max: 1 });
  try {
    for (let i = 0; i < 500; i++) {
      const { rows } = await watcher.query<{ n: number }>(
        `select count(*)::integer as n from pg_stat_activity where query like 'select pg_sleep%'`,
      );
      if ((rows[0]?.n ?? 0) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the statements never started');
  } finally {
    await watcher.close();
  }
}

/** The first answer of the restarted server (bounded: it takes a moment to accept connections). */
async function untilAnswered(db: Database): Promise<unknown[]> {
  for (let i = 0; i < 100; i++) {
    try {
      return (await db.query('select 1 as answer')).rows;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('the restarted server never answered');
}
