import { createServer, type RequestListener, type Server } from 'node:http';
import { listeningPort, type Config } from './config.js';
import { AppError, sendProblem } from './errors.js';
import { applyHttpLimits, CONNECTIONS_CHECK_MS } from './http-limits.js';

/** A port that could not be listened on; start-up stops with `message` as its one line. */
export class PortError extends Error {
  override name = 'PortError';
}

/** The HTTP server of a process, listening before it starts, serving once it has. */
export interface HttpServer {
  server: Server;
  /** From now on requests go to `listener` (until then: 503, the process is starting). */
  serve(listener: RequestListener): void;
}

const starting = new AppError(
  503,
  'service_unavailable',
  'Service unavailable',
  'hookprompt is starting (the database is being prepared); try again in a moment.',
  { 'Retry-After': '1' },
);

/**
 * Listens on the role's port (PORT, or WORKER_PORT for a worker) before the process migrates,
 * creates an admin or starts a worker: a port that is taken stops start-up with nothing done.
 * Requests that arrive meanwhile are answered 503 with Retry-After.
 */
export async function listenFirst(config: Config): Promise<HttpServer> {
  let current: RequestListener = (_req, res) => sendProblem(res, starting);
  const server = createServer({ connectionsCheckingInterval: CONNECTIONS_CHECK_MS }, (req, res) =>
    current(req, res),
  );
  applyHttpLimits(server, config);
  const { port, variable } = listeningPort(config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(portError(error, port, variable)),
    );
    server.listen(port, config.host, () => resolve());
  });
  return { server, serve: (listener) => (current = listener) };
}

function portError(error: NodeJS.ErrnoException, port: number, variable: string): Error {
  const where = `port ${port} (${variable})`;
  if (error.code === 'EADDRINUSE')
    return new PortError(
      `${where} is already in use: stop the process using it, or set ${variable} to a free port`,
    );
  if (error.code === 'EACCES')
    return new PortError(`${where} may not be used by this user: choose a port above 1023`);
  if (error.code === 'EADDRNOTAVAIL')
    return new PortError(`${where}: HOST is not an address of this machine`);
  return error;
}
