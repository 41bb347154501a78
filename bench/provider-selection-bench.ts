/**
 * CPU the worker spends per event on choosing providers and keeping the record of its calls:
 * resolving the channel's provider and fallbacks, running the attempt through the fallback
 * runner, the attempt's record and the statement parameters it becomes, and the call metrics.
 * Measured against the bare provider call it wraps, with an in-process provider that answers
 * at once, so what remains is the bookkeeping alone. Two cases: a channel on `default` alone
 * (no lookup of the workspace's providers), and one whose own provider fails with a 503 and
 * falls back to a second (two calls recorded).
 *
 * Run with `npx tsx bench/provider-selection-bench.ts`.
 */
import { AiError, type AiProvider, type AiRequest } from '../src/ai/ai-provider.js';
import { toAiSettings } from '../src/ai/ai-settings.js';
import { runWithFallbacks } from '../src/ai/fallback-runner.js';
import { Metrics } from '../src/metrics/metrics.js';
import { attemptRecord, callParams } from '../src/worker/ai-call.js';
import { countCalls } from '../src/worker/call-metrics.js';
import { callTargets } from '../src/ai/call-targets.js';

const usage = {
  prompt_tokens: 120,
  completion_tokens: 40,
  total_tokens: 160,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
};
const answering: AiProvider = {
  name: 'answering',
  deterministic: false,
  complete: async (request) => ({ text: 'ok', model: request.model ?? 'm', usage, latencyMs: 3 }),
};
// Made once: building an error (its stack) is the provider's cost, not the bookkeeping's.
const unavailable = new AiError('The AI server failed (HTTP 503): overloaded', true, undefined, {
  unanswered: false,
  httpStatus: 503,
});
const overloaded: AiProvider = {
  name: 'overloaded',
  deterministic: false,
  complete: () => Promise.reject(unavailable),
};
const own = new Map([
  ['primary', overloaded],
  ['backup', answering],
]);
const deps = {
  provider: answering,
  providers: async () => own,
  defaultModel: 'gpt-4o-mini',
};
const request: AiRequest = { prompt: 'Order 42 shipped', history: [] };
const signal = new AbortController().signal;
const pass = async () => undefined;
const metrics = new Metrics();

const cases = {
  default: { model: 'gpt-4o-mini' },
  fallback: { provider: 'primary', fallbacks: [{ provider: 'backup', model: 'small' }] },
};

async function bookkept(stored: unknown): Promise<void> {
  const settings = toAiSettings(stored);
  const targets = await callTargets(deps, '1', settings);
  const result = await runWithFallbacks(targets, request, signal, pass);
  await countCalls(metrics, '1', result.calls);
  callParams(attemptRecord(result));
}

async function bare(): Promise<void> {
  await answering.complete(request, signal);
}

async function cpuPerCall(work: () => Promise<void>, n: number): Promise<number> {
  for (let i = 0; i < 20_000; i++) await work();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}

const N = 200_000;
const baseline = await cpuPerCall(bare, N);
console.log(`bare provider call: ${baseline.toFixed(4)} ms CPU`);
for (const [name, stored] of Object.entries(cases)) {
  const total = await cpuPerCall(() => bookkept(stored), N);
  console.log(
    `${name.padEnd(8)}: ${total.toFixed(4)} ms CPU per event, ${(total - baseline).toFixed(4)} ms added`,
  );
}
