/**
 * Messages to destinations, measured on PostgreSQL (each part on a scratch database, dropped at
 * the end; hookprompt runs from the sources as child processes, the platforms' loopback fakes in
 * this one, checking every body and credential as the real APIs would):
 *
 *   1. Per kind (telegram, slack, discord, teams, webhook): N finished events, each with one
 *      message to one destination, sent by one process (ROLE=all) with 8 (--slots) slots;
 *      messages per second from the first to the last taken, every message checked by the fake
 *      (the webhook kind's signature by the standardwebhooks package), none taken twice.
 *   2. Order per thread under retries: --events events in --threads threads to a Telegram fake
 *      that refuses a tenth of the requests (429 with retry_after 0): every thread's messages
 *      arrive in event order, none twice, none lost.
 *
 *   npx tsx bench/destinations-bench.ts [--messages=2000] [--events=1000] [--threads=20] [--only=1,2]
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { FakeChats, type ChatKind } from '../test/support/fake-chats.js';
import { ReplyReceiver } from '../test/support/reply-receiver.js';
import { hookpromptEnv } from './lib/hookprompt.js';
import { createScratchDatabase } from './lib/scratch-database.js';
import { startServer } from './lib/server-process.js';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    events: { type: 'string', default: '1000' },
    threads: { type: 'string', default: '20' },
    only: { type: 'string', default: '1,2' },
    slots: { type: 'string', default: '8' },
    kinds: { type: 'string', default: 'telegram,slack,discord,teams,webhook' },
  },
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const entry = { nodeArgs: ['--import', 'tsx', 'src/main.ts'] };
const logFile = (name: string) => join('/tmp', `hookprompt-destinations-bench-${name}.log`);
const RETRIES = Array.from({ length: 40 }, () => '10ms').join(',');

console.log(
  `# destinations benchmark — ${new Date().toISOString()}, ${cpus().length} CPUs, load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);

if (flags.only.includes('1')) {
  console.log(
    `\n## 1. ${flags.messages} messages per kind, one process sending, ${flags.slots} slots`,
  );
  for (const kind of flags.kinds.split(',')) await throughput(kind, Number(flags.messages));
}
if (flags.only.includes('2')) await orderUnderRetries(Number(flags.events), Number(flags.threads));

/** Where one kind's messages arrive, and how many of them came (checked) and came twice. */
interface Sink {
  destination: Record<string, unknown>;
  received(): string[];
  rejected(): number;
  prepare(channelSecret: string): void;
}

function sinkFor(kind: string, chats: FakeChats, receiver: ReplyReceiver): Sink {
  const fromChats = (of: ChatKind) => ({
    received: () => chats.of(of).map((m) => m.text),
    rejected: () => chats.requests - chats.messages.length,
    prepare: () => undefined,
  });
  switch (kind) {
    case 'telegram':
      return {
        destination: { kind, bot_token: '1:BENCH', chat_id: '77' },
        ...fromChats('telegram'),
      };
    case 'slack':
      return { destination: { kind, token: 'xoxb-bench', channel: 'C1' }, ...fromChats('slack') };
    case 'discord':
      return {
        destination: { kind, webhook_url: chats.webhookUrl('discord') },
        ...fromChats('discord'),
      };
    case 'teams':
      return {
        destination: { kind, webhook_url: chats.webhookUrl('teams') },
        ...fromChats('teams'),
      };
    default:
      return {
        destination: { kind: 'webhook', url: receiver.url('/bench') },
        received: () =>
          receiver.messages
            .filter((m) => m.verifiedWith.length > 0)
            .map((m) => (m.json as { message?: string }).message ?? ''),
        rejected: () => receiver.messages.filter((m) => m.verifiedWith.length === 0).length,
        prepare: (secret) => (receiver.secrets = [secret]),
      };
  }
}

/** A web process with a channel sending to `destination`; its id and reply secret. */
async function channelWith(
  databaseUrl: string,
  name: string,
  destination: Record<string, unknown>,
  chats: FakeChats,
) {
  const apiKey = 'bench-destinations-key-0123456789';
  const server = await startServer({
    name: `${name}-web`,
    nodeArgs: entry.nodeArgs,
    logFile: logFile(`${name}-web`),
    env: hookpromptEnv(databaseUrl, apiKey, { DELIVERY_ALLOW_PRIVATE: 'true', ...chats.env }),
  });
  // It answers HTTP while the database is still being prepared: ready once /readyz says so.
  for (let tries = 0; (await fetch(`${server.origin}/readyz`)).status !== 200; tries++) {
    if (tries > 600) throw new Error('hookprompt never became ready');
    await delay(100);
  }
  const res = await fetch(`${server.origin}/api/v1/channels`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench ${name}`, template: '{{n}}', destinations: [destination] }),
  });
  if (res.status !== 201) throw new Error(`POST /channels: ${res.status} ${await res.text()}`);
  const running = { server };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ id: string; reply_secret: string | null }>(
    `select id, reply_secret from channels order by id desc limit 1`,
  );
  return { running, client, channelId: rows[0]?.id as string, secret: rows[0]?.reply_secret ?? '' };
}

/** Finishes `count` events of the channel, one statement each in id order (so in thread order). */
async function finishEvents(client: pg.Client, channelId: string, count: number, threads: number) {
  await client.query(
    `insert into events (workspace_id, channel_id, status, payload, prompt, reply, attempts, thread_key)
     select workspace_id, id, 'processing', json_build_object('chat', 't' || (n % greatest($3, 1)))::text,
            'p', n::text, 1, case when $3 > 0 then 't' || (n % greatest($3, 1)) end
     from channels, generate_series(1, $2) as n where channels.id = $1`,
    [channelId, count, threads],
  );
  await client.query(
    `do $$ declare r record; begin
       for r in select id from events where channel_id = ${Number(channelId)} order by id loop
         update events set status = 'replied', completed_at = now() where id = r.id;
       end loop;
     end $$`,
  );
}

function startWorker(databaseUrl: string, name: string, chats: FakeChats) {
  return startServer({
    name: `${name}-worker`,
    nodeArgs: entry.nodeArgs,
    logFile: logFile(`${name}-worker`),
    env: hookpromptEnv(databaseUrl, 'unused-key-0123456789', {
      // ROLE=all, not worker: a worker listens on WORKER_PORT, where startServer does not look
      ROLE: 'all',
      WORKER_CONCURRENCY: flags.slots,
      DELIVERY_ALLOW_PRIVATE: 'true',
      DELIVERY_RETRY_SCHEDULE: RETRIES,
      ...chats.env,
    }),
  });
}

async function until(done: () => boolean, limitMs: number): Promise<void> {
  const started = performance.now();
  while (!done() && performance.now() - started < limitMs) await delay(20);
}

async function throughput(kind: string, count: number): Promise<void> {
  const database = await createScratchDatabase(adminUrl, `dest_${kind}`);
  const chats = await FakeChats.start();
  chats.telegramTokens.add('1:BENCH');
  chats.slackTokens.add('xoxb-bench');
  const receiver = await ReplyReceiver.start();
  const sink = sinkFor(kind, chats, receiver);
  const { running, client, channelId, secret } = await channelWith(
    database.url,
    kind,
    sink.destination,
    chats,
  );
  try {
    sink.prepare(secret);
    await finishEvents(client, channelId, count, 0);
    const worker = await startWorker(database.url, kind, chats);
    let first = 0;
    let last = 0;
    let seen = 0;
    await until(() => {
      const now = sink.received().length;
      if (now > seen) {
        first ||= performance.now();
        last = performance.now();
        seen = now;
      }
      return now >= count;
    }, 300_000);
    await worker.stop();
    const texts = sink.received();
    const twice = texts.length - new Set(texts).size;
    const seconds = (last - first) / 1000;
    console.log(
      `${kind}: ${new Set(texts).size}/${count} distinct messages taken in ${seconds.toFixed(2)} s: ` +
        `${((texts.length - 1) / seconds).toFixed(0)} messages/s; refused by the fake: ${sink.rejected()}; taken twice: ${twice}`,
    );
  } finally {
    await client.end();
    await running.server.stop();
    await Promise.all([chats.close(), receiver.close()]);
    await database.drop();
  }
}

async function orderUnderRetries(events: number, threads: number): Promise<void> {
  const database = await createScratchDatabase(adminUrl, 'dest_order');
  const chats = await FakeChats.start();
  chats.telegramTokens.add('1:BENCH');
  const destination = { kind: 'telegram', bot_token: '1:BENCH', chat_id: '{{chat}}' };
  const { running, client, channelId } = await channelWith(
    database.url,
    'order',
    destination,
    chats,
  );
  try {
    await finishEvents(client, channelId, events, threads);
    chats.failureRate = 0.1;
    const started = performance.now();
    const worker = await startWorker(database.url, 'order', chats);
    await until(() => chats.of('telegram').length >= events, 300_000);
    const seconds = (performance.now() - started) / 1000;
    await worker.stop();
    const byChat = new Map<string, number[]>();
    for (const m of chats.of('telegram'))
      byChat.set(m.to, [...(byChat.get(m.to) ?? []), Number(m.text)]);
    const outOfOrder = [...byChat.values()].filter((list) =>
      list.some((n, i) => i > 0 && n < (list[i - 1] ?? 0)),
    ).length;
    const texts = chats.of('telegram').map((m) => m.text);
    console.log(
      `\n## 2. order per thread: ${events} events in ${threads} threads, a tenth of the requests refused (429)\n` +
        `${new Set(texts).size}/${events} distinct messages in ${seconds.toFixed(2)} s; requests ${chats.requests} ` +
        `(${chats.requests - chats.messages.length} refused); threads out of order: ${outOfOrder}; taken twice: ${texts.length - new Set(texts).size}`,
    );
  } finally {
    await client.end();
    await running.server.stop();
    await chats.close();
    await database.drop();
  }
}
