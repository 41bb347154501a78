import autocannon, { type AutocannonClient } from 'autocannon';
import {
  countStatus,
  summariseLatencies,
  type LatencySummary,
  type StatusCounts,
} from './latency.js';
import type { CpuUse } from './process-cpu.js';
import type { RequestSigner } from './targets.js';

export interface ClosedLoopResult {
  connections: number;
  seconds: number;
  /** 200 answers per second. */
  acceptedPerSecond: number;
  /** Latency of the 200 answers only. */
  latency: LatencySummary;
  /** Every answer but 200, by status; "error" counts requests that got no answer. */
  non200: StatusCounts;
}

/** A closed-loop run's answers, not yet summarised (runs taking turns are summed first). */
export interface ClosedLoopSamples {
  connections: number;
  seconds: number;
  /** Latency of each 200 answer, in ms. */
  latencies: number[];
  non200: StatusCounts;
}

/**
 * `connections` senders, each posting the next request as soon as the previous one is answered
 * (autocannon's closed loop): the highest rate the server sustains at that concurrency.
 */
export async function runClosedLoop(
  url: string,
  body: string,
  connections: number,
  seconds: number,
  /** Adds headers to every request (a signature, a unique delivery id); prepared by the caller. */
  signer?: RequestSigner,
): Promise<ClosedLoopResult> {
  return summariseClosedLoop([await closedLoopSamples(url, body, connections, seconds, signer)]);
}

/** One result of several runs at the same concurrency, as if they had been one. */
export function summariseClosedLoop(runs: ClosedLoopSamples[]): ClosedLoopResult {
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const latencies = runs.flatMap((run) => run.latencies);
  const non200: StatusCounts = {};
  for (const run of runs)
    for (const [status, n] of Object.entries(run.non200))
      non200[status] = (non200[status] ?? 0) + n;
  return {
    connections: runs[0]?.connections ?? 0,
    seconds,
    acceptedPerSecond: latencies.length / seconds,
    latency: summariseLatencies(latencies),
    non200,
  };
}

/** runClosedLoop's run, with every latency kept. */
export function closedLoopSamples(
  url: string,
  body: string,
  connections: number,
  seconds: number,
  signer?: RequestSigner,
): Promise<ClosedLoopSamples> {
  const latencies: number[] = [];
  const non200: StatusCounts = {};
  let done = false;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // A Buffer, so that a request rebuilt for its own headers does not encode the body again.
        body: Buffer.from(body),
        connections,
        duration: seconds,
        setupClient: signer ? (client) => sendSigned(client, url, body, signer) : undefined,
      },
      (error, result) => {
        done = true;
        if (error) return reject(error);
        // autocannon counts connection errors and timeouts apart from the answers.
        const unanswered = result.errors + result.resets;
        if (unanswered > 0) non200.error = (non200.error ?? 0) + unanswered;
        resolve({ connections, seconds: result.duration, latencies, non200 });
      },
    );
    // Our own record, to keep sub-millisecond precision and to time exactly the 200 answers.
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (done) return;
      if (statusCode === 200) latencies.push(responseTime);
      else countStatus(non200, String(statusCode));
    });
  });
}

/**
 * Gives a connection's requests their own headers. autocannon's per-request hook
 * (`requests[].setupRequest`) builds each request anew from objects into a new Buffer: it made a
 * signed request cost the load generator twice the CPU of a plain one (26 against 13.5 µs
 * against a hello-world server), on the cores the server shares. Here the client's request
 * iterator hands over the next request as one ASCII string, which the socket writes as it is
 * (15–17 µs): the fields autocannon 8's client reads (`nextRequest()`, then
 * `currentRequest.requestBuffer`, written to the socket).
 */
function sendSigned(client: AutocannonClient, url: string, body: string, signer: RequestSigner) {
  const iterator = client.requestIterator;
  if (typeof iterator?.nextRequest !== 'function' || !iterator.currentRequest?.requestBuffer)
    throw new Error('autocannon no longer has the request iterator this benchmark feeds');
  const target = new URL(url);
  const head =
    `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
    `Connection: keep-alive\r\ncontent-type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  const nextRequest = () => ({ requestBuffer: `${head}${signer.headerLines()}\r\n${body}` });
  iterator.currentRequest = nextRequest();
  iterator.nextRequest = () => {
    iterator.resetted = false;
    iterator.currentRequest = nextRequest();
    return iterator.currentRequest;
  };
}

export interface ClosedLoopRow extends ClosedLoopResult {
  /** The target's short name: ours, ours-info, a, a+q, b, c. */
  key: string;
  target: string;
  cpu: CpuUse;
  /** Which round of the interleaved runs ((a), ours, (a), ours…) it belongs to. */
  round?: number;
}
