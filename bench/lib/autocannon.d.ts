// The part of autocannon 8's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    timeout?: number;
    /** Called with each connection's client before its first request. */
    setupClient?: (client: AutocannonClient) => void;
  }

  /** The part of a connection's client that closed-loop.ts feeds (autocannon 8.0.0). */
  export interface AutocannonClient {
    requestIterator?: {
      /** What the client writes to its socket for the current request. */
      currentRequest?: { requestBuffer?: Buffer | string };
      nextRequest: () => { requestBuffer?: Buffer | string };
      resetted: boolean;
    };
  }

  interface Result {
    /** Seconds from the first request to the end of the run. */
    duration: number;
    errors: number;
    timeouts: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter {
    on(
      event: 'response',
      listener: (
        client: unknown,
        statusCode: number,
        resBytes: number,
        responseTime: number,
      ) => void,
    ): this;
    on(event: 'done', listener: (result: Result) => void): this;
    on(event: 'reqError', listener: (error: Error) => void): this;
    stop(): void;
  }

  function autocannon(
    options: Options,
    callback: (error: Error | null, result: Result) => void,
  ): Instance;
  export default autocannon;
}
