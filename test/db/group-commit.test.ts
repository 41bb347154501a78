import { expect, it } from 'vitest';
import { DatabaseTimeoutError } from '../../src/db/database.js';
import { GroupCommit } from '../../src/db/group-commit.js';

/**
 * A group commit with one write slot, which its first batch holds until `release()`: what is
 * submitted meanwhile waits. `written` lists every batch written, in order.
 */
function slotHeldByFirstBatch() {
  const written: number[][] = [];
  let release: () => void = () => undefined;
  const commit = new GroupCommit<number, number>(
    async (items) => {
      written.push(items);
      if (written.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items;
    },
    { maxBatchSize: 10, maxConcurrentWrites: 1 },
  );
  return { commit, written, release: () => release() };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

it('refuses an item still waiting for a write slot when its deadline passes, without writing it', async () => {
  const { commit, written, release } = slotHeldByFirstBatch();
  const first = commit.submit(1, Date.now() + 60_000);
  await nextTurn();
  const started = performance.now();
  const late = commit.submit(2, Date.now() + 50);
  await expect(late).rejects.toBeInstanceOf(DatabaseTimeoutError);
  expect(performance.now() - started).toBeLessThan(1_000);

  const third = commit.submit(3, Date.now() + 60_000);
  release();
  expect(await first).toBe(1);
  expect(await third).toBe(3);
  expect(written).toEqual([[1], [3]]);
});

it('writes a batch with the earliest deadline of its items', async () => {
  const deadlines: number[] = [];
  const commit = new GroupCommit<number, number>(
    async (items, deadline) => {
      deadlines.push(deadline);
      return items;
    },
    { maxBatchSize: 10, maxConcurrentWrites: 1 },
  );
  const soon = Date.now() + 5_000;
  await Promise.all([
    commit.submit(1, soon + 100),
    commit.submit(2, soon),
    commit.submit(3, soon + 200),
  ]);
  expect(deadlines).toEqual([soon]);
});

it('refuses a waiting item at its own deadline when it is due before those waiting ahead of it', async () => {
  const { commit, release } = slotHeldByFirstBatch();
  const first = commit.submit(1, Date.now() + 60_000);
  await nextTurn();
  const patient = commit.submit(2, Date.now() + 60_000);
  await nextTurn();
  const started = performance.now();
  const hurried = commit.submit(3, Date.now() + 50);
  await expect(hurried).rejects.toBeInstanceOf(DatabaseTimeoutError);
  expect(performance.now() - started).toBeLessThan(1_000);

  release();
  expect(await first).toBe(1);
  expect(await patient).toBe(2);
});

it('keeps a batch within its weight, sending an item heavier than the bound alone', async () => {
  const written: number[][] = [];
  const commit = new GroupCommit<number, number>(
    async (items) => {
      written.push(items);
      return items;
    },
    { maxBatchSize: 10, maxConcurrentWrites: 1, maxBatchWeight: 10, weigh: (item) => item },
  );
  const deadline = Date.now() + 60_000;
  const items = [4, 5, 1, 12, 3, 3, 3, 2];
  expect(await Promise.all(items.map((item) => commit.submit(item, deadline)))).toEqual(items);
  expect(written).toEqual([[4, 5, 1], [12], [3, 3, 3], [2]]);
});
