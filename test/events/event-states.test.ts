import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EVENT_STATUSES,
  EVENT_TRANSITIONS,
  FINISHED_STATUSES,
  INITIAL_STATUSES,
  QUEUED_STATUSES,
  REPLY_OUTCOMES,
  UNFINISHED_STATUSES,
  type EventStatus,
} from '../../src/events/event-states.js';
import { useFixture } from '../support/harness.js';
import { createTestDatabase } from '../support/test-database.js';

/** Every TypeScript file under `dir`, with its text. */
function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => ({ file, text: readFileSync(file, 'utf8') }));
}

/**
 * The status changes a queue statement (one per file) makes: to the status it sets (a parameter,
 * or a column of parameters unnested, means one of the worker's outcomes), from the statuses its
 * where clause accepts.
 */
function transitionsIn(text: string): [from: string, to: string][] {
  const set = /set\s+status = (?:'(\w+)'|\$\d+|\w+\.status\b)/.exec(text);
  if (!set) return [];
  const to = set[1] ? [set[1]] : [...REPLY_OUTCOMES];
  const from = text.includes('sqlStatusList(QUEUED_STATUSES)')
    ? [...QUEUED_STATUSES]
    : Array.from(text.matchAll(/where [^`]*status = '(\w+)'/g), (match) => match[1] as string);
  return from.flatMap((f) => to.map((t): [string, string] => [f, t]));
}

describe('the event lifecycle module', () => {
  it('splits every status into unfinished and finished, and stores events only as pending, rejected or filtered', () => {
    expect([...UNFINISHED_STATUSES, ...FINISHED_STATUSES].sort()).toEqual(
      [...EVENT_STATUSES].sort(),
    );
    expect(INITIAL_STATUSES).toEqual(['pending', 'rejected', 'filtered']);
    for (const status of FINISHED_STATUSES) expect(EVENT_TRANSITIONS[status]).toEqual([]);
  });

  it('is the only list of statuses: every status written in the SQL of src/ is one of them', () => {
    // Trials keep statuses of their own (running, done, canceled) in their own table.
    const eventSources = sources('src').filter(
      ({ file }) => !file.startsWith(join('src', 'trials')),
    );
    const literals = eventSources.flatMap(({ file, text }) =>
      Array.from(text.matchAll(/status(?: = | in \()'(\w+)'((?:, '\w+')*)/g)).flatMap((match) =>
        [match[1], ...Array.from((match[2] ?? '').matchAll(/'(\w+)'/g), (m) => m[1])].map(
          (status) => ({ file, status }),
        ),
      ),
    );
    expect(literals.length).toBeGreaterThan(5);
    const unknown = literals.filter(
      ({ status }) => !EVENT_STATUSES.includes(status as EventStatus),
    );
    expect(unknown).toEqual([]);
  });

  it('allows every status change the queue statements make, and the queue makes all it allows', () => {
    const made = sources('src/worker')
      .filter(({ file }) => /queue-[\w-]+\.ts$/.test(file))
      .flatMap(({ text }) => transitionsIn(text));
    expect(made.length).toBeGreaterThanOrEqual(4);
    for (const [from, to] of made) {
      expect(EVENT_TRANSITIONS[from as EventStatus], `${from} → ${to}`).toContain(to);
    }
    const allowed = Object.entries(EVENT_TRANSITIONS).flatMap(([from, tos]) =>
      tos.map((to) => `${from} → ${to}`),
    );
    expect(new Set(made.map(([from, to]) => `${from} → ${to}`))).toEqual(new Set(allowed));
  });
});

describe('the database', () => {
  const database = useFixture(() => createTestDatabase(), { stop: (started) => started.drop() });

  it('accepts exactly the statuses of the lifecycle module', async () => {
    const { rows } = await database.db.query<{ definition: string }>(
      `select pg_get_constraintdef(oid) as definition from pg_constraint
       where conrelid = 'events'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%status%'`,
    );
    const inCheck = [...(rows[0]?.definition ?? '').matchAll(/'(\w+)'::text/g)].map((m) => m[1]);
    expect(inCheck.sort()).toEqual([...EVENT_STATUSES].sort());
  });
});
