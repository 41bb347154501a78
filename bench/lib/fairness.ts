import { setTimeout as delay } from 'node:timers/promises';
import { startWithFakeAi, type HookpromptOptions } from './hookprompt.js';
import { runSql } from './scratch-database.js';

export interface FairnessOptions {
  backlog: number;
  aiDelayMs: number;
  workerConcurrency: number;
}

export interface FairnessResult extends FairnessOptions {
  /** From the lone event's received_at to its completed_at (database clock). */
  loneEventMs: number;
  /** What fair claims promise: 2 × the AI latency + 1 s. */
  boundMs: number;
  /** Backlog events still unfinished when the lone event was replied. */
  backlogLeft: number;
}

/**
 * One workspace with `backlog` pending events, another with one: how long the one waits with
 * the worker busy on the backlog. Strictly oldest-first claims would make it wait for the whole
 * backlog (backlog / concurrency × AI latency).
 */
export async function runFairness(
  hookprompt: Omit<HookpromptOptions, 'env'>,
  options: FairnessOptions,
): Promise<FairnessResult> {
  const { server, webhookUrl, ai } = await startWithFakeAi(
    hookprompt,
    options.aiDelayMs,
    options.workerConcurrency,
  );
  const db = hookprompt.databaseUrl;
  try {
    const [busy] = await runSql<{ id: string; workspace_id: string }>(
      db,
      `select id::text, workspace_id::text from channels order by id limit 1`,
    );
    await runSql(
      db,
      `insert into events (workspace_id, channel_id, payload)
       select $1, $2, '{"order":{"id":' || n || '}}' from generate_series(1, $3::integer) n`,
      [busy?.workspace_id, busy?.id, options.backlog],
    );
    // A second workspace and channel, as the panel would create them; its token is known here.
    const token = `fairness${Date.now()}abcdefghijklmnop`;
    await runSql(
      db,
      `with ws as (insert into workspaces (name, chat_quota) values ('Quiet', 10) returning id)
       insert into channels (workspace_id, name, template, webhook_token, webhook_token_hash)
       select id, 'Lone', 'Lone event {{n}}', $1, encode(sha256(convert_to($1, 'UTF8')), 'hex') from ws`,
      [token],
    );
    await delay(1000); // the worker is busy with the backlog by now
    const res = await fetch(new URL(`/hooks/${token}`, webhookUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    const { event_id: eventId } = (await res.json()) as { event_id: string };
    for (;;) {
      const [row] = await runSql<{ status: string; ms: number | null; left: number }>(
        db,
        `select status, extract(epoch from completed_at - received_at)::float8 * 1000 as ms,
           (select count(*)::int from events where channel_id = $2
              and status in ('pending', 'processing')) as left
         from events where id = $1`,
        [eventId, busy?.id],
      );
      if (row && row.status !== 'pending' && row.status !== 'processing') {
        return {
          ...options,
          loneEventMs: row.ms ?? Infinity,
          boundMs: 2 * options.aiDelayMs + 1000,
          backlogLeft: row.left,
        };
      }
      await delay(20);
    }
  } finally {
    await server.stop();
    await ai.close();
  }
}
