/**
 * An event parked for approval holds no worker slot (issue 53): live traffic's replies/s with
 * and without 200 events waiting for an approval, on PostgreSQL (a scratch database, dropped at
 * the end; hookprompt runs from the sources as a child process, ROLE=all).
 *
 * The model is a fake answering after a fixed delay: a prompt starting `PARK` gets a call of the
 * `refund` tool (approval "always"), any other a reply. Live traffic: `--senders` senders each
 * posting `?wait=10` again as soon as answered, for `--seconds`, counted by `replied` answers.
 *
 *   npx tsx bench/approvals-bench.ts [--seconds=10] [--senders=32] [--slots=16] [--delay=100] [--parked=200]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { startHookprompt } from './lib/hookprompt.js';
import { orderPayload } from './lib/payload.js';
import { createScratchDatabase } from './lib/scratch-database.js';
import { chatCompletion, toolCallsAnswer } from '../test/support/fake-ai-server.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    senders: { type: 'string', default: '32' },
    slots: { type: 'string', default: '16' },
    delay: { type: 'string', default: '100' },
    parked: { type: 'string', default: '200' },
  },
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(flags.seconds);
const delayMs = Number(flags.delay);

/** The fake model: a tool call for prompts starting `PARK`, else a reply, each after `delayMs`. */
async function startModel(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as {
        messages?: { role: string; content: unknown }[];
      };
      const prompt = String(body.messages?.find((m) => m.role === 'user')?.content ?? '');
      const parks = prompt.startsWith('PARK') && !body.messages?.some((m) => m.role === 'tool');
      const answer = JSON.stringify(
        parks
          ? toolCallsAnswer(['refund', '{"order":"A1"}']).body
          : chatCompletion('Thanks, it ships today.'),
      );
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer),
        delayMs,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Replies/s of `senders` closed-loop senders over `seconds`. */
async function liveReplies(webhookUrl: string): Promise<{ perSecond: number; other: number }> {
  const until = Date.now() + seconds * 1000;
  let replied = 0;
  let other = 0;
  const sender = async () => {
    while (Date.now() < until) {
      const res = await fetch(`${webhookUrl}?wait=10`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: orderPayload,
      });
      const body = (await res.json()) as { status?: string };
      if (body.status === 'replied') replied++;
      else other++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: Number(flags.senders) }, sender));
  return { perSecond: replied / ((Date.now() - started) / 1000), other };
}

console.log(
  `# approvals benchmark — ${new Date().toISOString()}, ${cpus().length} CPUs, load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(
      ' ',
    )}; model fake at ${delayMs} ms, WORKER_CONCURRENCY=${flags.slots}, ${flags.senders} senders, ${seconds} s each`,
);
const database = await createScratchDatabase(adminUrl, 'approvals');
const model = await startModel();
const running = await startHookprompt({
  name: 'approvals',
  entry: { nodeArgs: ['--import', 'tsx', 'src/main.ts'] },
  databaseUrl: database.url,
  logFile: '/tmp/hookprompt-approvals-bench.log',
  env: {
    ROLE: 'all',
    AI_PROVIDER: 'openai',
    AI_BASE_URL: `${model.origin}/v1`,
    AI_MODEL: 'bench-model',
    WORKER_CONCURRENCY: flags.slots,
    TOOLS_ALLOW_PRIVATE: 'true',
  },
});
try {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${running.server.origin}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${running.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await api('POST', '/tools', {
    name: 'refund',
    kind: 'http',
    description: 'Refunds an order',
    url: `${model.origin}/refunds`,
    input_schema: { type: 'object', properties: { order: { type: 'string' } } },
    approval: 'always',
  });
  const parking = await api('POST', '/channels', {
    name: 'refunds',
    template: 'PARK {{order.id}}',
    ai: { tools: ['refund'] },
  });
  const parkUrl = `${running.server.origin}${new URL(String(parking.webhook_url)).pathname}`;

  await liveReplies(running.webhookUrl); // warm-up
  const before = await liveReplies(running.webhookUrl);
  console.log(
    `live, nothing parked: ${before.perSecond.toFixed(1)} replies/s (${before.other} not replied)`,
  );

  const parked = Number(flags.parked);
  for (let i = 0; i < parked; i++) {
    await fetch(parkUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: orderPayload,
    });
  }
  const parkStarted = Date.now();
  for (;;) {
    const page = await api('GET', '/events?status=awaiting_approval&limit=200');
    const waiting = (page.data as unknown[]).length;
    if (waiting >= parked) break;
    if (Date.now() - parkStarted > 120_000) throw new Error(`only ${waiting} parked`);
    await delay(200);
  }
  console.log(`${parked} events parked in ${((Date.now() - parkStarted) / 1000).toFixed(1)} s`);
  const after = await liveReplies(running.webhookUrl);
  console.log(
    `live, ${parked} parked: ${after.perSecond.toFixed(1)} replies/s (${after.other} not replied); ` +
      `ratio ${(after.perSecond / before.perSecond).toFixed(2)}; bound ${(Number(flags.slots) / (delayMs / 1000)).toFixed(0)}/s`,
  );
} finally {
  await running.server.stop();
  await model.close();
  await database.drop();
}
