import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AddressRefusedError,
  guardedLookup,
  refuseLiteralAddress,
  type AddressPolicy,
} from './address-guard.js';

/** What the other side answered (any status: the caller decides what a status means). */
export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The start of the answer's body (its first `keepBodyBytes`); the rest is read and dropped. */
  bodyStart: string;
  /** How many bytes the whole body had: more than `keepBodyBytes` means bodyStart was cut. */
  bodyBytes: number;
  /** How long the answer asked the caller to wait (`Retry-After`), in ms; 0 when it did not. */
  retryAfterMs: number;
}

/**
 * Why no answer came: the call was not sent (an address that is not allowed, a URL that cannot
 * be used), took longer than its limit, or failed on the network (`reason`: a code such as
 * ECONNREFUSED, or a message). `retryable` says whether trying again later may help; the
 * message is shown to admins in Brain Logs.
 */
export class OutboundError extends Error {
  override name = 'OutboundError';

  constructor(
    message: string,
    readonly retryable: boolean,
    readonly kind: 'not_sent' | 'timeout' | 'network',
    readonly reason: string,
  ) {
    super(message);
  }
}

/**
 * `allowPrivate` lets calls reach loopback and private addresses; otherwise a refusal names the
 * `setting` that would allow them (see address-guard.ts).
 */
export type OutboundOptions = AddressPolicy & {
  /** The whole call's limit: name resolution, connection, request, and the answer's last byte. */
  timeoutMs: number;
  /** How much of an answer's body is kept (`bodyStart`); 1 KB, for error messages, by default. */
  keepBodyBytes?: number;
  /** Calls in flight to one host at most; more wait for a socket. 64 by default. */
  maxSocketsPerHost?: number;
};

/**
 * The one small client for outbound HTTP: reply deliveries to URLs admins typed in, the AI
 * server's chat completions, and calls to `http` tools. A deadline on every call, redirects never followed (a 3xx is an
 * answer like any other), every address checked at connect time, and the failures classified
 * here once. Its own keep-alive agents, so sockets opened under one address policy are never
 * reused under another.
 *
 * Built on node:http rather than `fetch`: a call costs the process about half the CPU (230–310
 * against 520–660 µs for a small JSON POST at 128 in flight, on the 2-core VM), which the
 * worker's event loop spends once per AI call.
 */
export class OutboundClient {
  private readonly agents;
  private readonly lookup;
  private retired = false;

  constructor(private readonly options: OutboundOptions) {
    const maxSockets = options.maxSocketsPerHost ?? 64;
    this.agents = {
      'http:': new http.Agent({ keepAlive: true, maxSockets }),
      'https:': new https.Agent({ keepAlive: true, maxSockets }),
    };
    this.lookup = guardedLookup(options);
    for (const agent of Object.values(this.agents)) {
      // Runs after the agent's own listener has pooled the socket (or handed it to a call
      // waiting for one): a retired client keeps none idle.
      agent.on('free', (socket: Socket) => {
        if (this.retired && isIdle(agent, socket)) socket.destroy();
      });
    }
  }

  /**
   * POSTs `body` (a text, or texts sent one after the other as one body); resolves with the
   * answer, whatever its status, or rejects with an OutboundError.
   */
  post(
    url: string,
    body: OutboundBody,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<OutboundResponse> {
    return this.request('POST', url, body, headers, signal);
  }

  /**
   * Sends one request of `method`, with `body` or none (a tool's `GET`); resolves with the
   * answer, whatever its status, or rejects with an OutboundError.
   */
  async request(
    method: string,
    url: string,
    body: OutboundBody | undefined,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<OutboundResponse> {
    const { timeoutMs } = this.options;
    let target: URL;
    try {
      target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        throw new Error('only http:// and https:// URLs can be called');
      refuseLiteralAddress(target.hostname, this.options);
    } catch (error) {
      throw new OutboundError(
        `Not sent: ${messageOf(error)}.`,
        false,
        'not_sent',
        messageOf(error),
      );
    }
    const deadline = AbortSignal.timeout(timeoutMs);
    const aborted = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      return await this.send(method, target, body, headers, aborted);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted) {
        const reason = `no answer within ${timeoutMs} ms`;
        throw new OutboundError(`No answer within ${timeoutMs} ms.`, true, 'timeout', reason);
      }
      if (error instanceof AddressRefusedError)
        throw new OutboundError(`Not sent: ${error.message}.`, false, 'not_sent', error.message);
      const reason = networkReason(error);
      throw new OutboundError(
        `Could not reach ${target.host}: ${reason}.`,
        true,
        'network',
        reason,
      );
    }
  }

  /** Closes every socket, busy ones included (shutdown). */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }

  /**
   * For a client no call will use again (a provider tested once, or replaced): its idle
   * connections end now, busy ones as soon as their answer is read. A call made through it
   * afterwards still works, on a connection of its own.
   */
  retire(): void {
    this.retired = true;
    for (const agent of Object.values(this.agents)) {
      for (const socket of Object.values(agent.freeSockets).flat()) socket?.destroy();
    }
  }

  private send(
    method: string,
    target: URL,
    body: OutboundBody | undefined,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<OutboundResponse> {
    const transport = target.protocol === 'https:' ? https : http;
    const keep = this.options.keepBodyBytes ?? 1024;
    return new Promise((resolve, reject) => {
      const req = transport.request(target, {
        method,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': String(bodyBytes(body)) },
        agent: this.agents[target.protocol as 'http:' | 'https:'],
        lookup: this.lookup,
        signal,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          if (read < keep) chunks.push(chunk);
          read += chunk.length;
        });
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('the answer was cut off')));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            bodyStart: Buffer.concat(chunks).subarray(0, keep).toString('utf8'),
            bodyBytes: read,
            retryAfterMs: retryAfterMs(res.headers['retry-after']),
          }),
        );
      });
      if (typeof body === 'string' || body === undefined) req.end(body);
      // Each part is written once the connection has taken the one before: no text of the
      // whole body is made, nor a copy of all its parts at once. A failure reaches 'error'.
      else pipeline(Readable.from(body), req).catch(() => undefined);
    });
  }
}

/** A request's body: one text, or texts sent one after the other (see jsonBody in src/ai/). */
export type OutboundBody = string | readonly string[];

function bodyBytes(body: OutboundBody): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  return body.reduce((bytes, part) => bytes + Buffer.byteLength(part), 0);
}

function isIdle(agent: http.Agent, socket: Socket): boolean {
  return Object.values(agent.freeSockets).some((sockets) => sockets?.includes(socket));
}

const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** `Retry-After` as seconds or as an HTTP date, in ms from now; 0 when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number {
  if (!header) return 0;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : 0;
}

function networkReason(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string') return code;
  return messageOf(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
