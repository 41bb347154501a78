import { readdirSync } from 'node:fs';
import { eventually } from './eventually.js';

/** This process's open file descriptors (Linux): sockets left open by the service count here. */
export const openDescriptors = () => readdirSync('/proc/self/fd').length;

/** Room for the database pool and the runtime opening a few of their own meanwhile. */
export const DESCRIPTOR_MARGIN = 12;

/**
 * Waits until the open descriptors are back within the margin of `before`. Closing a connection
 * takes the other end a moment: polled, with a deadline far below the fake servers' keep-alive,
 * so connections left open are never closed for us.
 */
export async function staysFlat(before: number): Promise<void> {
  await eventually(() => openDescriptors() <= before + DESCRIPTOR_MARGIN, {
    timeoutMs: 5_000,
    what: `open descriptors back within ${DESCRIPTOR_MARGIN} of ${before} (now ${openDescriptors()})`,
  });
}
