import { setTimeout as delay } from 'node:timers/promises';
import type { FakeAiProtocol } from './fake-ai-server.js';
import { startWithFakeAi, type HookpromptOptions } from './hookprompt.js';
import { summariseLatencies, type LatencySummary, type StatusCounts } from './latency.js';
import { runOpenLoop } from './open-loop.js';
import { orderPayload } from './payload.js';
import { cpuBetween, cpuOfPids, machineCpu, postgresBackends } from './process-cpu.js';
import { runSql } from './scratch-database.js';

export interface EndToEndOptions {
  events: number;
  rate: number;
  aiDelayMs: number;
  /** The API the fake AI speaks, and so the provider hookprompt uses. */
  aiProtocol: FakeAiProtocol;
  workerConcurrency: number;
  /** Give up when no event is finished for this long. */
  stallMs: number;
}

export interface EndToEndResult extends EndToEndOptions {
  accepted: number;
  non200: StatusCounts;
  /** Final statuses of the accepted events ("pending"/"processing" left means it stalled). */
  statuses: Record<string, number>;
  aiCalls: number;
  /** Replied events per second, from the first 200 to the last reply. */
  repliedPerSecond: number;
  /**
   * Replies per second from the first reply to the last: the worker's completion rate. When
   * events are posted faster than the worker answers them, a backlog waits all along and this
   * is its capacity (WORKER_CONCURRENCY ÷ AI latency at best).
   */
  completedPerSecond: number;
  /** From the sender's 200 to the event's `completed_at`. */
  answerToReplied: LatencySummary;
  /** Between the event's own `received_at` and `completed_at` (both database clocks). */
  receivedToCompleted: LatencySummary;
  /**
   * From the first event posted to the last finished, in cores: the server, its database's
   * PostgreSQL backends, this process (the sender and the fake AI), and the whole machine.
   */
  serverCores: number | undefined;
  postgresCores: number;
  benchCores: number;
  machineCores: number | undefined;
  stalled: boolean;
}

/**
 * The whole path with the worker running: events posted at a steady rate, answered by a fake
 * model server (`aiProtocol`) that takes `aiDelayMs` per reply, until every event is finished.
 */
export async function runEndToEnd(
  hookprompt: Omit<HookpromptOptions, 'env'>,
  options: EndToEndOptions,
): Promise<EndToEndResult> {
  const { server, webhookUrl, ai } = await startWithFakeAi(
    hookprompt,
    options.aiDelayMs,
    options.workerConcurrency,
    options.aiProtocol,
  );
  try {
    const answeredAt = new Map<string, number>();
    const database = new URL(hookprompt.databaseUrl).pathname.slice(1);
    const snapshot = () => ({
      at: performance.now(),
      server: cpuOfPids([server.pid]),
      postgres: cpuOfPids(postgresBackends(database)),
      own: process.cpuUsage(),
      machine: machineCpu(),
    });
    const started = snapshot();
    const sent = await runOpenLoop(webhookUrl, orderPayload, {
      rate: options.rate,
      seconds: options.events / options.rate,
      onAccepted: (eventId, at) => answeredAt.set(eventId, at),
    });
    const stalled = await waitForWorker(hookprompt.databaseUrl, options.stallMs);
    const ended = snapshot();
    const wallMs = ended.at - started.at;
    const own = process.cpuUsage(started.own);

    // extract() gives numeric, which pg hands over as text.
    const rows = await runSql<{
      id: string;
      status: string;
      received_ms: string;
      completed_ms: string | null;
    }>(
      hookprompt.databaseUrl,
      `select id::text, status,
              extract(epoch from received_at) * 1000 as received_ms,
              extract(epoch from completed_at) * 1000 as completed_ms
       from events where id = any($1::bigint[])`,
      [[...answeredAt.keys()]],
    );
    const statuses: Record<string, number> = {};
    const answerToReplied: number[] = [];
    const receivedToCompleted: number[] = [];
    let firstReply = Infinity;
    let lastReply = 0;
    for (const row of rows) {
      statuses[row.status] = (statuses[row.status] ?? 0) + 1;
      if (row.status !== 'replied' || row.completed_ms === null) continue;
      const completed = Number(row.completed_ms);
      answerToReplied.push(completed - (answeredAt.get(row.id) as number));
      receivedToCompleted.push(completed - Number(row.received_ms));
      firstReply = Math.min(firstReply, completed);
      lastReply = Math.max(lastReply, completed);
    }
    const firstAnswer = Math.min(...answeredAt.values());
    return {
      ...options,
      accepted: answeredAt.size,
      non200: sent.non200,
      statuses,
      aiCalls: ai.calls(),
      repliedPerSecond: answerToReplied.length / ((lastReply - firstAnswer) / 1000),
      completedPerSecond: (answerToReplied.length - 1) / ((lastReply - firstReply) / 1000),
      answerToReplied: summariseLatencies(answerToReplied),
      receivedToCompleted: summariseLatencies(receivedToCompleted),
      serverCores: started.server.size
        ? cpuBetween(started.server, ended.server) / wallMs
        : undefined,
      postgresCores: cpuBetween(started.postgres, ended.postgres) / wallMs,
      benchCores: (own.user + own.system) / 1000 / wallMs,
      machineCores:
        ended.machine && started.machine
          ? (ended.machine.busyMs - started.machine.busyMs) / wallMs
          : undefined,
      stalled,
    };
  } finally {
    await server.stop();
    await ai.close();
  }
}

/** Waits until no event is pending or processing; true when none finished for `stallMs`. */
async function waitForWorker(databaseUrl: string, stallMs: number): Promise<boolean> {
  let unfinished = Infinity;
  let lastProgress = Date.now();
  for (;;) {
    const [row] = await runSql<{ n: number }>(
      databaseUrl,
      `select count(*)::int as n from events where status in ('pending', 'processing')`,
    );
    const now = (row as { n: number }).n;
    if (now === 0) return false;
    if (now < unfinished) {
      unfinished = now;
      lastProgress = Date.now();
    } else if (Date.now() - lastProgress > stallMs) {
      return true;
    }
    await delay(250);
  }
}
