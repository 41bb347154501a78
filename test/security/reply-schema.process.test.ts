import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFakeAi } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

// The process is the point here: a check that would take hours runs off the event loop, which
// keeps answering (the in-process behaviours of reply schemas are in reply-schema.test.ts).
const ai = useFakeAi();

const withSchema = (schema: unknown) => ({ ai: { response_format: { json_schema: schema } } });

async function send(webhookUrl: string, body: unknown): Promise<string> {
  const res = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { event_id: string }).event_id;
}

describe('a reply whose check would take hours (a pattern that backtracks)', () => {
  const ADMIN_API_KEY = 'reply-schema-admin-key-0123456789';
  let server: ServerProcess | undefined;
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  it('fails as reply_invalid while the process answers /healthz, and later replies are checked', async () => {
    if (testDatabaseUrl) database = await createTestDatabase();
    server = await startServerProcess({
      ...ai.env(),
      ADMIN_API_KEY,
      AI_MAX_ATTEMPTS: '2',
      WORKER_RETRY_BASE_MS: '0',
      ...(database ? { DATABASE_URL: database.url as string } : {}),
    });
    const base = server.baseUrl;
    // Each `a` more doubles the time a backtracking engine takes to refuse this reply.
    ai.defaultReply = { body: chatCompletion(JSON.stringify(`${'a'.repeat(40)}!`)) };
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${base}/api/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
        // A process whose event loop is held answers nothing: that must show as a failure.
        signal: AbortSignal.timeout(5_000),
      });
    const created = await api('/channels', {
      method: 'POST',
      body: JSON.stringify({
        name: 'Backtracking',
        template: 'Code {{code}}',
        ...withSchema({ type: 'string', pattern: '^(a+)+$' }),
      }),
    });
    expect(created.status).toBe(201);
    const { webhook_url: webhookUrl } = (await created.json()) as { webhook_url: string };
    const id = await send(webhookUrl, { code: 'a' });
    await ai.waitForRequests(1);

    const failed = await eventually(
      async () => {
        const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
        expect(health.status).toBe(200);
        const event = (await (await api(`/events/${id}`)).json()) as Record<string, unknown>;
        return event.status === 'failed' ? event : undefined;
      },
      { what: 'the event to fail' },
    );
    expect(failed.attempts).toBe(2);
    expect(failed.error).toMatch(/^reply_invalid: .*did not finish/);
    expect(ai.requests).toHaveLength(2);
    // The checkers that overran were replaced: a reply that fits is taken.
    ai.defaultReply = { body: chatCompletion('"aaa"') };
    const next = await send(webhookUrl, { code: 'b' });
    const replied = await eventually(async () => {
      const event = (await (await api(`/events/${next}`)).json()) as {
        status: string;
      };
      return event.status === 'replied' ? event : undefined;
    });
    expect(replied).toMatchObject({ status: 'replied', reply: '"aaa"' });
  });
});
