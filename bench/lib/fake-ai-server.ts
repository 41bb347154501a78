import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAiServer {
  /** AI_BASE_URL for hookprompt: `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** Chat-completion requests received so far. */
  calls(): number;
  close(): Promise<void>;
}

/**
 * A stand-in for a chat-completions server that answers every request after a fixed delay, like
 * a model taking `delayMs` to reply. Its answers are valid `chat.completion` objects.
 */
export async function startFakeAiServer(delayMs: number): Promise<FakeAiServer> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls++;
      const request = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { model?: string };
      const answer = JSON.stringify({
        id: `chatcmpl-bench-${calls}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model ?? 'bench-model',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Thank you for your order, Ada! It ships today.',
            },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 60, completion_tokens: 12, total_tokens: 72 },
      });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
