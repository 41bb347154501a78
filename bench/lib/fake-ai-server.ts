import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Which API the fake AI speaks: OpenAI's chat completions or Anthropic's Messages API. */
export type FakeAiProtocol = 'openai' | 'anthropic';

export interface FakeAiServer {
  /** The settings that point hookprompt's provider at this server (AI_PROVIDER, AI_BASE_URL…). */
  env: Record<string, string>;
  /** Requests received so far. */
  calls(): number;
  close(): Promise<void>;
}

const REPLY = 'Thank you for your order, Ada! It ships today.';
const BENCH_KEY = 'sk-ant-bench-key';

/** A valid answer of each protocol to a request naming `model`. */
const answers: Record<FakeAiProtocol, (model: string, call: number) => unknown> = {
  openai: (model, call) => ({
    id: `chatcmpl-bench-${call}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 60, completion_tokens: 12, total_tokens: 72 },
  }),
  anthropic: (model, call) => ({
    id: `msg_bench_${call}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: REPLY }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 60,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 12,
    },
  }),
};

/**
 * A stand-in for a model server that answers every request after a fixed delay, like a model
 * taking `delayMs` to reply. Its answers are valid in the protocol chosen. Idle connections are
 * closed after `keepAliveMs` (Node's 5 s unless given).
 */
export async function startFakeAiServer(
  delayMs: number,
  protocol: FakeAiProtocol = 'openai',
  keepAliveMs?: number,
): Promise<FakeAiServer> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls++;
      const request = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { model?: string };
      const answer = JSON.stringify(answers[protocol](request.model ?? 'bench-model', calls));
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer);
      }, delayMs);
    });
  });
  if (keepAliveMs !== undefined) server.keepAliveTimeout = keepAliveMs;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env: Record<FakeAiProtocol, Record<string, string>> = {
    openai: { AI_PROVIDER: 'openai', AI_BASE_URL: `${origin}/v1` },
    anthropic: { AI_PROVIDER: 'anthropic', AI_BASE_URL: origin, AI_API_KEY: BENCH_KEY },
  };
  return {
    env: { ...env[protocol], AI_MODEL: 'bench-model' },
    calls: () => calls,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
