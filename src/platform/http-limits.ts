import type { Server } from 'node:http';
import type { Config } from './config.js';

/** How often Node checks its connections against the limits below (its default is 30 s). */
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * Node's own limits on reading a request, set deliberately rather than left at their defaults
 * (5 minutes for a whole request):
 * - headers must have arrived within 20 s (a client dribbling them holds a connection otherwise);
 * - a whole request within BODY_TIMEOUT_MS + 5 s. The webhook receiver answers a slow body
 *   `408 request_timeout` itself at BODY_TIMEOUT_MS; this is the backstop for every other route,
 *   and for bodies nobody reads (a refusal answered before the body came).
 */
export function applyHttpLimits(server: Server, config: Pick<Config, 'bodyTimeoutMs'>): void {
  server.requestTimeout = config.bodyTimeoutMs + 5_000;
  server.headersTimeout = Math.min(20_000, server.requestTimeout);
}
