import autocannon from 'autocannon';
import {
  countStatus,
  summariseLatencies,
  type LatencySummary,
  type StatusCounts,
} from './latency.js';
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

/**
 * `connections` senders, each posting the next request as soon as the previous one is answered
 * (autocannon's closed loop): the highest rate the server sustains at that concurrency.
 */
export function runClosedLoop(
  url: string,
  body: string,
  connections: number,
  seconds: number,
  /** Adds headers to every request (a signature, a unique delivery id); prepared by the caller. */
  signer?: RequestSigner,
): Promise<ClosedLoopResult> {
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
        requests: signer
          ? [
              {
                // autocannon hands over a copy of its headers for each request.
                setupRequest: (request) => {
                  Object.assign(request.headers ?? {}, signer.headersFor());
                  return request;
                },
              },
            ]
          : undefined,
      },
      (error, result) => {
        done = true;
        if (error) return reject(error);
        // autocannon counts connection errors and timeouts apart from the answers.
        const unanswered = result.errors + result.resets;
        if (unanswered > 0) non200.error = (non200.error ?? 0) + unanswered;
        resolve({
          connections,
          seconds: result.duration,
          acceptedPerSecond: latencies.length / result.duration,
          latency: summariseLatencies(latencies),
          non200,
        });
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
