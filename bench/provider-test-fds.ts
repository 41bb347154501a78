/**
 * Open file descriptors of a running hookprompt across provider tests. The finding: every
 * `POST /api/v1/providers/{id}/test` left a socket open (300 tests, 300 more descriptors).
 *
 * The server runs from the sources as a child process (ROLE=web, the embedded database in
 * memory); its model is a fake in this process that keeps idle connections open for ten
 * minutes, as real model servers keep them for long, so what the service leaves open stays
 * open. One provider is added pointing at it; --tests tests are made one after the other, half
 * through that provider and half through `default` (the server's own AI_* settings), and the
 * server's /proc/<pid>/fd is counted before, right after, and a second later.
 *
 *   npx tsx bench/provider-test-fds.ts [--tests=1000]
 */
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startFakeAiServer } from './lib/fake-ai-server.js';
import { startHookprompt } from './lib/hookprompt.js';

const { values: flags } = parseArgs({ options: { tests: { type: 'string', default: '1000' } } });
const tests = Number(flags.tests);

console.log(
  `# provider tests and open descriptors — ${new Date().toISOString()}, ${cpus().length} CPUs, ` +
    `load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}\n${tests} tests, one at a time`,
);

const ai = await startFakeAiServer(0, 'openai', 600_000);
const { server, apiKey } = await startHookprompt({
  name: 'provider-fds',
  entry: { nodeArgs: ['--import', 'tsx', 'src/main.ts'] },
  databaseUrl: 'memory://',
  logFile: join('/tmp', 'hookprompt-provider-fds-bench.log'),
  env: { ...ai.env, PROVIDERS_ALLOW_PRIVATE: 'true' },
});
const openDescriptors = () => readdirSync(`/proc/${server.pid}/fd`).length;

try {
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${server.origin}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const added = await api('/providers', {
    name: 'bench',
    kind: 'openai',
    base_url: ai.env.AI_BASE_URL,
    api_key: 'sk-bench',
  });
  const ids = [String(added.id), 'default'];
  const testOnce = async (i: number) => {
    const answer = await api(`/providers/${ids[i % 2]}/test`, { model: 'bench-model' });
    if (answer.ok !== true) throw new Error(`test ${i}: ${JSON.stringify(answer)}`);
  };
  // Warm: the database, the API key's cache, the price table.
  for (let i = 0; i < 20; i++) await testOnce(i);

  const before = openDescriptors();
  const started = performance.now();
  for (let i = 0; i < tests; i++) await testOnce(i);
  const seconds = (performance.now() - started) / 1000;
  const after = openDescriptors();
  await delay(1000);
  const settled = openDescriptors();
  console.log(
    `tests:                ${tests} in ${seconds.toFixed(1)} s (${ai.calls()} calls made)`,
  );
  console.log(`open fds before:      ${before}`);
  console.log(
    `open fds right after: ${after} (${after - before >= 0 ? '+' : ''}${after - before})`,
  );
  console.log(
    `open fds 1 s later:   ${settled} (${settled - before >= 0 ? '+' : ''}${settled - before})`,
  );
} finally {
  await server.stop();
  await ai.close();
}
