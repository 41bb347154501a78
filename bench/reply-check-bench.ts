/**
 * What checking a reply against a channel's JSON Schema costs, and what it does to the server.
 *
 * 1. The hot path: µs per check of a typical schema and reply, on the main thread as the
 *    service once did (Ajv, compiled once), and through `replyProblem` in the schema checkers,
 *    one check at a time and 16 at once.
 * 2. A pattern that backtracks: a server process, with an event-loop delay monitor preloaded,
 *    checks replies of `--a` letters `a` against `^(a+)+$`, first without the `!` (they fit at
 *    once), then with it (a backtracking engine takes 2^a steps to refuse them), while /healthz
 *    is asked every 20 ms. Prints the loop's delay p50, p99 and max, and the slowest /healthz.
 *
 * Run with `npm run bench:reply-check -- [--a 40] [--events 3] [--main path/to/main.ts]
 * [--database postgres://...] [--only hot-path|server]`. `--main` runs another checkout's
 * server, e.g. one from before the schema checkers; the embedded database, the default, runs its
 * queries on the event loop, so its delays show too.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { replyProblem } from '../src/ai/reply-check.js';
import { firstSchemaError, replyValidator } from '../src/reply-schema/reply-validator.js';
import { startServer, type ServerProcess } from './lib/server-process.js';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string', default: '40' },
    events: { type: 'string', default: '3' },
    main: { type: 'string', default: 'src/main.ts' },
    database: { type: 'string', default: 'memory://' },
    only: { type: 'string' },
  },
});

const orderSchema = {
  type: 'object',
  properties: {
    summary: { type: 'string', maxLength: 500 },
    total: { type: 'number', minimum: 0 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    items: { type: 'array', items: { type: 'object', required: ['sku'] } },
  },
  required: ['summary', 'total'],
};
const orderReply = JSON.stringify({
  summary: 'Order 123456 from Ada Lovelace: 2 items, paid by card, ships to London.',
  total: 99.5,
  currency: 'EUR',
  items: [{ sku: 'ENGINE-1' }, { sku: 'CARD-42' }],
});

async function hotPath(): Promise<void> {
  const onMainThread = () => {
    const { validate } = replyValidator(JSON.stringify(orderSchema));
    return validate(JSON.parse(orderReply)) ? undefined : firstSchemaError(validate);
  };
  const format = { json_schema: orderSchema };
  const inCheckers = () => replyProblem(orderReply, format);
  if (onMainThread() !== undefined || (await inCheckers()) !== undefined) {
    throw new Error('the sample reply should fit its schema');
  }
  const rounds = 20_000;
  const perCheck = async (check: () => unknown, inFlight: number) => {
    for (let n = 0; n < 2_000; n++) await check();
    const started = performance.now();
    for (let done = 0; done < rounds; done += inFlight) {
      await Promise.all(Array.from({ length: inFlight }, check));
    }
    return ((performance.now() - started) * 1000) / rounds;
  };
  console.log('hot path, µs per check of a typical schema and a 170-byte reply:');
  console.log(`  main thread (before):         ${(await perCheck(onMainThread, 1)).toFixed(1)}`);
  console.log(`  schema checkers, 1 at a time: ${(await perCheck(inCheckers, 1)).toFixed(1)}`);
  console.log(`  schema checkers, 16 at once:  ${(await perCheck(inCheckers, 16)).toFixed(1)}`);
}

/** A chat-completions server whose every answer is `content`. */
async function fakeAi(content: () => string): Promise<{ baseUrl: string; close(): void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'bench-model',
          choices: [{ index: 0, message: { role: 'assistant', content: content() } }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

async function backtracking(): Promise<void> {
  const letters = Number(args.a);
  let reply = JSON.stringify('a'.repeat(letters));
  const ai = await fakeAi(() => reply);
  const dir = mkdtempSync(join(tmpdir(), 'reply-check-bench-'));
  const delayFile = join(dir, 'loop-delay.json');
  const key = 'reply-check-bench-key-0123456789';
  const server = await startServer({
    name: 'hookprompt',
    nodeArgs: ['--import', 'tsx', '--import', './bench/lib/loop-delay-preload.ts', args.main],
    env: {
      ADMIN_API_KEY: key,
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.baseUrl,
      AI_MODEL: 'bench-model',
      AI_MAX_ATTEMPTS: '2',
      WORKER_RETRY_BASE_MS: '0',
      DATABASE_URL: args.database,
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      LOOP_DELAY_FILE: delayFile,
    },
    logFile: join(dir, 'server.log'),
  });
  try {
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${server.origin}/api/v1${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const channel = await api('/channels', {
      name: 'Backtracking',
      template: 'Code {{code}}',
      ai: { response_format: { json_schema: { type: 'string', pattern: '^(a+)+$' } } },
    });
    console.log(
      `\nserver ${args.main}: ${args.events} events, ${letters} letters a, 2 attempts each`,
    );
    // The server's own address: PUBLIC_BASE_URL is left at its default.
    const webhookUrl = `${server.origin}${new URL(channel.webhook_url as string).pathname}`;
    await run(server, api, webhookUrl, delayFile, 'replies that fit');
    reply = JSON.stringify(`${'a'.repeat(letters)}!`);
    await run(server, api, webhookUrl, delayFile, 'replies that backtrack');
  } finally {
    await server.stop(2_000);
    ai.close();
  }
}

async function run(
  server: ServerProcess,
  api: (path: string) => Promise<Record<string, unknown>>,
  webhookUrl: string,
  delayFile: string,
  what: string,
): Promise<void> {
  process.kill(server.pid, 'SIGUSR2');
  const started = performance.now();
  const ids: string[] = [];
  for (let n = 0; n < Number(args.events); n++) {
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"code": ${n}}`,
    });
    ids.push(((await res.json()) as { event_id: string }).event_id);
  }
  let slowestHealth = 0;
  let finished = false;
  const health = (async () => {
    while (!finished) {
      const asked = performance.now();
      await fetch(`${server.origin}/healthz`);
      slowestHealth = Math.max(slowestHealth, performance.now() - asked);
      await delay(20);
    }
  })();
  const statuses = async () =>
    Promise.all(ids.map(async (id) => (await api(`/events/${id}`)).status));
  while ((await statuses()).some((status) => status === 'pending' || status === 'processing')) {
    await delay(100);
  }
  finished = true;
  await health;
  const elapsed = performance.now() - started;
  process.kill(server.pid, 'SIGUSR2');
  await delay(200);
  const loop = JSON.parse(readFileSync(delayFile, 'utf8')) as Record<string, number>;
  console.log(
    `  ${what}: ${(await statuses()).join(', ')} in ${Math.round(elapsed)} ms; ` +
      `loop delay p50 ${loop.p50?.toFixed(1)} ms, p99 ${loop.p99?.toFixed(1)} ms, ` +
      `max ${loop.max?.toFixed(1)} ms (beyond the 5 ms sampling interval); ` +
      `slowest /healthz ${Math.round(slowestHealth)} ms`,
  );
}

const load = () =>
  `load average ${loadavg()
    .map((minutes) => minutes.toFixed(2))
    .join(' ')}`;
console.log(load());
if (args.only !== 'server') await hotPath();
if (args.only !== 'hot-path') await backtracking();
console.log(load());
