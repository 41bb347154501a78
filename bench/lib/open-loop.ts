import http from 'node:http';
import {
  countStatus,
  summariseLatencies,
  type LatencySummary,
  type StatusCounts,
} from './latency.js';

export interface OpenLoopResult {
  rate: number;
  seconds: number;
  sent: number;
  /** Latency of the 200 answers, each timed from the moment its request was due. */
  latency: LatencySummary;
  non200: StatusCounts;
}

export interface OpenLoopOptions {
  rate: number;
  seconds: number;
  /** Most requests in flight at once; more would wait for a socket, and that wait counts too. */
  sockets?: number;
  /** Called with each answered request's event id and the time its 200 arrived (epoch ms). */
  onAccepted?: (eventId: string, answeredAt: number) => void;
}

/**
 * Sends `rate` requests per second, evenly spaced, whatever the server does (an open loop, like
 * real senders). Each request is timed from when it was due, not from when it left: a server
 * stall that delays the sending of later requests shows up in their latency instead of being
 * hidden (coordinated omission). autocannon's fixed rate sends each second's requests in one
 * burst, so it cannot measure this.
 */
export async function runOpenLoop(
  url: string,
  body: string,
  options: OpenLoopOptions,
): Promise<OpenLoopResult> {
  const { rate, seconds, sockets = 256 } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const target = new URL(url);
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies: number[] = [];
  const non200: StatusCounts = {};
  const answers: Promise<void>[] = [];

  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const answeredAt = performance.now();
            if (res.statusCode === 200) {
              latencies.push(answeredAt - due);
              const { event_id: eventId } = JSON.parse(Buffer.concat(chunks).toString()) as {
                event_id?: string;
              };
              if (eventId) options.onAccepted?.(eventId, performance.timeOrigin + answeredAt);
            } else {
              countStatus(non200, String(res.statusCode));
            }
            resolve();
          });
        },
      );
      // Counted by its code (ECONNRESET, …), so a run's table says what went wrong.
      req.on('error', (error: NodeJS.ErrnoException) => {
        countStatus(non200, `error ${error.code ?? error.message}`);
        resolve();
      });
      req.end(body);
    });

  const start = performance.now() + 20;
  let next = 0;
  await new Promise<void>((finished) => {
    const tick = () => {
      const now = performance.now();
      // Everything due by now goes out, so a late timer never thins the schedule.
      while (next < total && start + next * interval <= now) {
        answers.push(send(start + next * interval));
        next++;
      }
      if (next >= total) return finished();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  await Promise.all(answers);
  agent.destroy();
  return { rate, seconds, sent: total, latency: summariseLatencies(latencies), non200 };
}
