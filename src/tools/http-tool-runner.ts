import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { OutboundClient, OutboundError } from '../outbound/outbound-client.js';
import {
  MAX_RESULT_CHARS,
  resultText,
  type ToolOutcome,
  type ToolRunner,
  type ToolTest,
} from './tool-runner.js';
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
  /** The worker's clients, one per timeout (a client's deadline is its own): kept alive. */
  private readonly clients = new Map<number, OutboundClient>();

  constructor(private readonly options: { allowPrivate: boolean }) {}

  async test(tool: ToolRow, input: Record<string, unknown>): Promise<ToolTest> {
    // A test belongs to no event: its key reads `hp-test-<h>`, the same for the same input.
    const client = this.newClient(tool.timeout_ms, 1);
    try {
      const outcome = await this.send(client, tool, input, JSON.stringify(input), 'test');
      if (outcome.status === 'ok') {
        const { httpStatus, latencyMs, text } = outcome;
        return { ok: true, http_status: httpStatus ?? 200, latency_ms: latencyMs, result: text };
      }
      return outcome.httpStatus === null
        ? { ok: false, error: outcome.text }
        : { ok: false, http_status: outcome.httpStatus, error: outcome.text.slice(0, 1_010) };
    } finally {
      client.close();
    }
  }

  /**
   * One call by the model for `eventId`: `input` valid for the tool (its placeholders put back),
   * `argumentsText` the arguments as the model sent them, for the Idempotency-Key.
   */
  call(
    tool: ToolRow,
    input: Record<string, unknown>,
    argumentsText: string,
    eventId: string,
    signal?: AbortSignal,
  ): Promise<ToolOutcome> {
    let client = this.clients.get(tool.timeout_ms);
    if (!client) this.clients.set(tool.timeout_ms, (client = this.newClient(tool.timeout_ms, 64)));
    return this.send(client, tool, input, argumentsText, eventId, signal);
  }

  /** Closes the worker's clients (shutdown). */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private newClient(timeoutMs: number, maxSocketsPerHost: number): OutboundClient {
    return new OutboundClient({
      allowPrivate: this.options.allowPrivate,
      setting: 'TOOLS_ALLOW_PRIVATE',
      timeoutMs,
      keepBodyBytes: KEEP_BODY_BYTES,
      maxSocketsPerHost,
    });
  }

  /**
   * The request: a non-2xx answer is an error result `HTTP <status>: <body start>`, a timeout
   * or a connection error the error's message.
   */
  private async send(
    client: OutboundClient,
    tool: ToolRow,
    input: Record<string, unknown>,
    argumentsText: string,
    eventId: string,
    signal?: AbortSignal,
  ): Promise<ToolOutcome> {
    const method = tool.method ?? 'POST';
    const body = WITH_BODY.has(method) ? JSON.stringify(input) : undefined;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(tool.headers)) headers[name.toLowerCase()] = value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    headers['idempotency-key'] = idempotencyKey(eventId, tool.name, argumentsText);
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const url = renderToolUrl(tool.url, input);
      const answer = await client.request(method, url, body, headers, signal);
      const httpStatus = answer.status;
      if (httpStatus < 200 || httpStatus > 299) {
        const text = resultText(`HTTP ${httpStatus}: ${answer.bodyStart}`);
        return { status: 'error', httpStatus, text, latencyMs: latency() };
      }
      const text = resultText(answer.bodyStart, answer.bodyBytes > KEEP_BODY_BYTES);
      return { status: 'ok', httpStatus, text, latencyMs: latency() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const text = error instanceof OutboundError ? error.message : String(error);
      return { status: 'error', httpStatus: null, text, latencyMs: latency() };
    }
  }
}
