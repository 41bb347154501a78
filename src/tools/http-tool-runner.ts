import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { OutboundClient, OutboundError } from '../outbound/outbound-client.js';
import { MAX_RESULT_CHARS, resultText, type ToolRunner, type ToolTest } from './tool-runner.js';
import type { ToolRow } from './tools-repo.js';
import { renderToolUrl } from './tool-url.js';

/** Methods that send the input as the JSON body; `GET` and `DELETE` send none. */
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Enough bytes for 16,384 characters of any UTF-8 text, and one more to know it was longer. */
const KEEP_BODY_BYTES = MAX_RESULT_CHARS * 4 + 1;

/**
 * `Idempotency-Key: hp-<event_id>-<h>`: `h` the first 16 hex digits of the SHA-256 of the tool's
 * name, a newline and the arguments as sent, so a retried event repeats the same key.
 */
export function idempotencyKey(eventId: string, toolName: string, argumentsText: string): string {
  const h = createHash('sha256').update(`${toolName}\n${argumentsText}`).digest('hex').slice(0, 16);
  return `hp-${eventId}-${h}`;
}

/**
 * Calls an `http` tool: its URL with the input's values in its placeholders, the input as JSON
 * body for `POST`, `PUT` and `PATCH`, the tool's headers, through an outbound client of its own
 * (addresses checked at connect time, no redirects followed) closed once the answer is read.
 */
export class HttpToolRunner implements ToolRunner {
  constructor(private readonly options: { allowPrivate: boolean }) {}

  async test(tool: ToolRow, input: Record<string, unknown>): Promise<ToolTest> {
    // A test belongs to no event: its key reads `hp-test-<h>`, the same for the same input.
    const argumentsText = JSON.stringify(input);
    const client = new OutboundClient({
      allowPrivate: this.options.allowPrivate,
      setting: 'TOOLS_ALLOW_PRIVATE',
      timeoutMs: tool.timeout_ms,
      keepBodyBytes: KEEP_BODY_BYTES,
      maxSocketsPerHost: 1,
    });
    const method = tool.method ?? 'POST';
    const body = WITH_BODY.has(method) ? argumentsText : undefined;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(tool.headers)) headers[name.toLowerCase()] = value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    headers['idempotency-key'] = idempotencyKey('test', tool.name, argumentsText);
    const started = performance.now();
    try {
      const answer = await client.request(method, renderToolUrl(tool.url, input), body, headers);
      const latency = Math.round(performance.now() - started);
      if (answer.status < 200 || answer.status > 299) {
        const start = answer.bodyStart.slice(0, 1_000);
        return { ok: false, http_status: answer.status, error: `HTTP ${answer.status}: ${start}` };
      }
      const result = resultText(answer.bodyStart, answer.bodyBytes > KEEP_BODY_BYTES);
      return { ok: true, http_status: answer.status, latency_ms: latency, result };
    } catch (error) {
      return { ok: false, error: error instanceof OutboundError ? error.message : String(error) };
    } finally {
      client.close();
    }
  }
}
