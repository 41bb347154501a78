import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimEvents } from '../../src/worker/queue-claim.js';
import { finishEvents } from '../../src/worker/queue-finish.js';
import { startAttempts } from '../../src/worker/queue-start-attempt.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel({ template: 'Order {{order.id}}' });
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
});

interface Row {
  id: string;
  status: string;
  attempts: number;
  prompt: string | null;
  missing: string[] | null;
  model: string | null;
  reply: string | null;
  error: string | null;
  usage: unknown;
  latency_ms: number | null;
  locked_by: string | null;
}

async function rowsOf(ids: string[]): Promise<Row[]> {
  const { rows } = await app.ctx.db.query<Row>(
    `select id, status, attempts, prompt, missing, model, reply, error, usage, latency_ms, locked_by
     from events where id = any($1::bigint[]) order by id`,
    [ids],
  );
  return rows;
}

async function claimed(count: number, workerId: string): Promise<string[]> {
  for (let i = 0; i < count; i++) {
    const res = await driver.sendEvent(channel.webhook_url, { order: { id: i } });
    expect(res.status).toBe(200);
  }
  const events = await claimEvents(app.ctx.db, workerId, count, 60_000);
  return events.map((event) => event.id).sort((a, b) => Number(a) - Number(b));
}

describe('starting the attempts of several events in one statement', () => {
  it('stores each its prompt, counts each attempt, and leaves an event another worker took alone', async () => {
    const [first, second, lost] = await claimed(3, 'w1');
    // The lease of `lost` ran out and another worker claimed it (the test hands it over directly).
    await app.ctx.db.query(`update events set locked_by = 'w2' where id = $1`, [lost]);

    const started = await startAttempts(app.ctx.db, 'w1', 60_000, [
      {
        eventId: first as string,
        prompt: 'Order 0',
        missing: ['a "b"', 'c\\d', 'e,f}'],
        provider: 'default',
        model: 'm1',
      },
      {
        eventId: second as string,
        prompt: 'Order 1 \ud800',
        missing: [],
        provider: 'default',
        model: null,
      },
      { eventId: lost as string, prompt: 'Order 2', missing: [], provider: 'default', model: 'm1' },
    ]);

    expect(started).toEqual(
      new Map([
        [first, 1],
        [second, 1],
      ]),
    );
    const rows = await rowsOf([first, second, lost] as string[]);
    expect(
      rows.map(({ id, attempts, prompt, missing, model, locked_by }) => ({
        id,
        attempts,
        prompt,
        missing,
        model,
        locked_by,
      })),
    ).toEqual([
      {
        id: first,
        attempts: 1,
        prompt: 'Order 0',
        missing: ['a "b"', 'c\\d', 'e,f}'],
        model: 'm1',
        locked_by: 'w1',
      },
      // PostgreSQL text holds no lone surrogate: it arrives as the replacement character.
      {
        id: second,
        attempts: 1,
        prompt: 'Order 1 \uFFFD',
        missing: [],
        model: null,
        locked_by: 'w1',
      },
      { id: lost, attempts: 0, prompt: null, missing: null, model: null, locked_by: 'w2' },
    ]);
  });
});

describe('the start of an attempt', () => {
  it('commits without waiting for the disk flush; other transactions still wait for it', async () => {
    const [event] = await claimed(1, 'w1');
    const setting = (db: Pick<typeof app.ctx.db, 'query'>) =>
      db
        .query<{ value: string }>(`select current_setting('synchronous_commit') as value`)
        .then(({ rows }) => rows[0]?.value);

    // Sent inside a transaction, the setting is seen for what follows in it.
    const inside = await app.ctx.db.transaction(async (tx) => {
      await startAttempts(tx, 'w1', 60_000, [
        {
          eventId: event as string,
          prompt: 'Order 0',
          missing: [],
          provider: 'default',
          model: null,
        },
      ]);
      return setting(tx);
    });

    expect(inside).toBe('off');
    expect(await setting(app.ctx.db)).toBe('on');
    expect((await rowsOf([event as string]))[0]?.attempts).toBe(1);
  });
});

describe('finishing several events in one statement', () => {
  it('stores each its own outcome', async () => {
    const [replied, failed, skipped] = await claimed(3, 'w1');
    await startAttempts(app.ctx.db, 'w1', 60_000, [
      {
        eventId: replied as string,
        prompt: 'Order 0',
        missing: [],
        provider: 'default',
        model: 'm1',
      },
      {
        eventId: failed as string,
        prompt: 'Order 1',
        missing: [],
        provider: 'default',
        model: null,
      },
    ]);
    const ended = await finishEvents(app.ctx.db, 'w1', [
      {
        eventId: replied as string,
        outcome: { status: 'replied', reply: 'lone \ud800 surrogate, "quotes", \\ and {braces}' },
        call: {
          provider: 'default',
          model: 'm1',
          usage: {
            prompt_tokens: 3,
            completion_tokens: 4,
            total_tokens: 7,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
          },
          latencyMs: 12,
          calls: [],
        },
      },
      {
        eventId: failed as string,
        outcome: { status: 'failed', error: 'The AI server refused the request (HTTP 401)' },
      },
      {
        eventId: skipped as string,
        outcome: { status: 'skipped', prompt: '', missing: ['a "b"', 'c\\d', 'e,f}'] },
      },
    ]);
    expect(ended).toEqual(new Set([replied, failed, skipped]));

    expect(await rowsOf([replied, failed, skipped] as string[])).toEqual([
      {
        id: replied,
        status: 'replied',
        attempts: 1,
        prompt: 'Order 0',
        missing: [],
        model: 'm1',
        // PostgreSQL text holds no lone surrogate: it arrives as the replacement character.
        reply: 'lone \uFFFD surrogate, "quotes", \\ and {braces}',
        error: null,
        usage: {
          prompt_tokens: 3,
          completion_tokens: 4,
          total_tokens: 7,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        latency_ms: 12,
        locked_by: null,
      },
      {
        id: failed,
        status: 'failed',
        attempts: 1,
        prompt: 'Order 1',
        missing: [],
        model: null,
        reply: null,
        error: 'The AI server refused the request (HTTP 401)',
        usage: null,
        latency_ms: null,
        locked_by: null,
      },
      {
        id: skipped,
        status: 'skipped',
        attempts: 0,
        prompt: '',
        missing: ['a "b"', 'c\\d', 'e,f}'],
        model: null,
        reply: null,
        error: null,
        usage: null,
        latency_ms: null,
        locked_by: null,
      },
    ]);
  });

  it('checks the owner of each: an event whose lease another worker took is left untouched', async () => {
    const [kept, lost] = await claimed(2, 'w1');
    // The lease of `lost` ran out and another worker claimed it (the test hands it over directly).
    await app.ctx.db.query(`update events set locked_by = 'w2' where id = $1`, [lost]);

    const reply = { status: 'replied', reply: 'late' } as const;
    const ended = await finishEvents(app.ctx.db, 'w1', [
      { eventId: kept as string, outcome: reply },
      { eventId: lost as string, outcome: reply },
    ]);

    expect(ended).toEqual(new Set([kept]));
    const [keptRow, lostRow] = await rowsOf([kept, lost] as string[]);
    expect(keptRow).toMatchObject({ status: 'replied', reply: 'late', locked_by: null });
    expect(lostRow).toMatchObject({
      status: 'processing',
      attempts: 0,
      prompt: null,
      reply: null,
      locked_by: 'w2',
    });
  });

  it('ends nothing twice: a second finish of the same events changes nothing', async () => {
    const [id] = await claimed(1, 'w1');
    const finish = {
      eventId: id as string,
      outcome: { status: 'failed', error: 'first' } as const,
    };
    expect(await finishEvents(app.ctx.db, 'w1', [finish])).toEqual(new Set([id]));
    expect(
      await finishEvents(app.ctx.db, 'w1', [
        { ...finish, outcome: { status: 'replied', reply: 'second' } },
      ]),
    ).toEqual(new Set());
    expect((await rowsOf([id as string]))[0]).toMatchObject({ status: 'failed', error: 'first' });
  });
});
