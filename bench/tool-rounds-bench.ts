/**
 * Tool rounds: what one round costs the service, and how many replies a second it gives when
 * every reply takes one round.
 *
 * 1. CPU per round added by the service: the attempt of an event whose model asks for one tool
 *    (a call of the model, a call of an `http` tool, the model again) against the attempt of
 *    one asking none (one call), each measured alone with `process.cpuUsage`, the fakes in a
 *    child process answering at once so their CPU is not counted. The difference is what a
 *    round adds: the request with the tools and the rounds so far, reading the tool calls, the
 *    arguments' check in a schema checker, the tool's request and its result guarded, and the
 *    second model call's HTTP. Goal: at most 1 ms at the median.
 * 2. Replies per second at 32 concurrent events with one tool round each, the model and the
 *    tool answering after 200 ms: at best 32 ÷ 0.6 s. Goal: at least 0.9 of it.
 *
 * Both run the worker's own code (askAttempt, the OpenAI provider, the toolbox and its http
 * runner) in this process; the database's statements of an attempt are not part of it (a round
 * adds one: the tool calls stored and the lease renewed).
 *
 * Run with `npx tsx bench/tool-rounds-bench.ts`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiProvider } from '../src/ai/openai-provider.js';
import { DEFAULT_AI_SETTINGS } from '../src/ai/ai-settings.js';
import type { CallTarget } from '../src/ai/fallback-runner.js';
import { Metrics } from '../src/metrics/metrics.js';
import { HttpToolRunner } from '../src/tools/http-tool-runner.js';
import { Toolbox } from '../src/tools/toolbox.js';
import { ToolListCache } from '../src/tools/tool-list-cache.js';
import { askAttempt, type AttemptTools, type ReadyRequest } from '../src/worker/event-request.js';
import { chatCompletion, toolCallsAnswer } from '../test/support/fake-ai-server.js';

/** A tool as the toolbox opens it (the tools room's row, read here through the toolbox). */
type ToolRow = Parameters<typeof Toolbox.open>[0][number];

const SCHEMA = {
  type: 'object',
  properties: { order: { type: 'string' } },
  required: ['order'],
  additionalProperties: false,
};

if (process.argv[2] === 'fakes') await serveFakes(Number(process.argv[3]));
else await main();

/** The child: a model that asks for `lookup` once per conversation, and the tool. */
async function serveFakes(delayMs: number): Promise<void> {
  const answer = (res: ServerResponse, body: unknown) => {
    const send = () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (delayMs) setTimeout(send, delayMs);
    else send();
  };
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const model = createServer(async (req, res) => {
    const body = JSON.parse(await read(req)) as { messages: { role: string }[]; tools?: unknown };
    const asks = body.tools !== undefined && !body.messages.some((m) => m.role === 'tool');
    answer(
      res,
      asks
        ? toolCallsAnswer(['lookup', '{"order":"A1"}']).body
        : chatCompletion('Order A1 has shipped.'),
    );
  });
  const tool = createServer(async (req, res) => {
    await read(req);
    answer(res, { order: 'A1', status: 'shipped', carrier: 'DHL', eta: '2026-12-01' });
  });
  model.keepAliveTimeout = tool.keepAliveTimeout = 60_000;
  for (const server of [model, tool]) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  const port = (server: typeof model) => (server.address() as AddressInfo).port;
  process.send?.({ model: port(model), tool: port(tool) });
}

async function startFakes(
  delayMs: number,
): Promise<{ child: ChildProcess; model: number; tool: number }> {
  const child = fork(import.meta.filename, ['fakes', String(delayMs)], { stdio: 'inherit' });
  const ports = await new Promise<{ model: number; tool: number }>((resolve) =>
    child.once('message', (message) => resolve(message as { model: number; tool: number })),
  );
  return { child, ...ports };
}

function setUp(ports: { model: number; tool: number }) {
  const provider = new OpenAiProvider({
    baseUrl: `http://127.0.0.1:${ports.model}/v1`,
    model: 'fake',
    apiKey: 'k',
    timeoutMs: 10_000,
  });
  const targets: CallTarget[] = [{ provider: 'default', instance: provider, model: 'fake' }];
  const ready: ReadyRequest = {
    kind: 'ready',
    request: { prompt: 'Ticket: where is my order A1?', history: [], model: 'fake' },
    settings: { ...DEFAULT_AI_SETTINGS, tools: ['lookup'] },
    guard: undefined,
    images: [],
    missing: [],
    inputTruncated: false,
  };
  const row: ToolRow = {
    id: '1',
    workspace_id: '1',
    name: 'lookup',
    kind: 'http',
    description: 'The status of an order',
    approval: 'never',
    safe_in_trials: false,
    timeout_ms: 10_000,
    headers: { authorization: 'Bearer tool-key' },
    url: `http://127.0.0.1:${ports.tool}/orders/{{input.order}}`,
    method: 'POST',
    input_schema: SCHEMA,
    allowed_tools: null,
    created_at: new Date(),
    updated_at: new Date(),
  };
  return { targets, ready, row };
}

async function toolsFor(
  row: ToolRow,
  http: HttpToolRunner,
  metrics: Metrics,
): Promise<AttemptTools> {
  return {
    toolbox: await Toolbox.open([row], http, new ToolListCache(), true),
    guard: undefined,
    eventId: '42',
    trial: false,
    metrics,
    maxRounds: 4,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function cpuPerRound(): Promise<void> {
  const fakes = await startFakes(0);
  const { targets, ready, row } = setUp(fakes);
  const http = new HttpToolRunner({ allowPrivate: true });
  const metrics = new Metrics();
  const signal = new AbortController().signal;
  const cpuOf = async (work: () => Promise<unknown>) => {
    const start = process.cpuUsage();
    await work();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  const withRound = async () => {
    const tools = await toolsFor(row, http, metrics);
    const asked = await askAttempt(ready, targets, signal, undefined, tools);
    if (asked.kind !== 'answered' || asked.toolCalls.length !== 1 || !asked.result.ok) {
      throw new Error('no round was made');
    }
  };
  const without = async () => {
    const asked = await askAttempt(ready, targets, signal);
    if (asked.kind !== 'answered' || !asked.result.ok) throw new Error('no reply');
  };
  for (let i = 0; i < 2_000; i++) {
    await withRound();
    await without();
  }
  const rounds: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < 5_000; i++) {
    rounds.push(await cpuOf(withRound));
    plain.push(await cpuOf(without));
  }
  const added = median(rounds) - median(plain);
  console.log(
    `CPU per attempt: ${median(plain).toFixed(3)} ms without tools, ${median(rounds).toFixed(3)} ms with one round (p50)`,
  );
  console.log(`CPU added per tool round (p50): ${added.toFixed(3)} ms (goal ≤ 1 ms)`);
  http.close();
  fakes.child.kill();
}

async function repliesPerSecond(): Promise<void> {
  const delayMs = 200;
  const concurrency = 32;
  const seconds = 15;
  const fakes = await startFakes(delayMs);
  const { targets, ready, row } = setUp(fakes);
  const http = new HttpToolRunner({ allowPrivate: true });
  const metrics = new Metrics();
  const signal = new AbortController().signal;
  let replies = 0;
  let measuring = false;
  const until = Date.now() + 2_000 + seconds * 1000;
  const startAt = Date.now() + 2_000;
  const slot = async () => {
    while (Date.now() < until) {
      const asked = await askAttempt(
        ready,
        targets,
        signal,
        undefined,
        await toolsFor(row, http, metrics),
      );
      if (asked.kind !== 'answered' || !asked.result.ok || asked.toolCalls.length !== 1) {
        throw new Error('no round was made');
      }
      if (measuring) replies++;
    }
  };
  const timer = setTimeout(() => (measuring = true), startAt - Date.now());
  await Promise.all(Array.from({ length: concurrency }, slot));
  clearTimeout(timer);
  const rate = replies / seconds;
  const bound = concurrency / ((3 * delayMs) / 1000);
  console.log(
    `replies/s at ${concurrency} concurrent events, one tool round each, fakes at ${delayMs} ms: ` +
      `${rate.toFixed(1)} (bound ${bound.toFixed(1)}; ${(rate / bound).toFixed(3)} of it, goal ≥ 0.9)`,
  );
  http.close();
  fakes.child.kill();
}

async function main(): Promise<void> {
  await cpuPerRound();
  await repliesPerSecond();
  process.exit(0);
}
