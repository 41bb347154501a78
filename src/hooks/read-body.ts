import type { IncomingMessage } from 'node:http';
import { hookErrors } from './hook-errors.js';
import { REJECTED_BODY_BYTES } from './rejected-body.js';

export type BodyResult =
  | { tooLarge: false; bytes: Buffer }
  /** `head` is the start of the body (what a refused event keeps); `received` counts every byte. */
  | { tooLarge: true; head: Buffer; received: number };

/**
 * Reads the request body up to `limit` bytes. Past the limit nothing more is kept but the rest
 * is still read and dropped, so the sender reliably gets our answer instead of a reset connection.
 * A body still arriving at `deadline` (BODY_TIMEOUT_MS after the request began) is given up:
 * 408, nothing stored, and the connection is closed once answered.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  deadline: number,
): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let kept = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) tooLarge = true;
      if (tooLarge && kept >= REJECTED_BODY_BYTES) return;
      chunks.push(chunk);
      kept += chunk.length;
    };
    const onEnd = () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      resolve(tooLarge ? oversized(all, received) : { tooLarge: false, bytes: all });
    };
    const onError = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    const timer = setTimeout(
      () => {
        req.off('data', onData).off('end', onEnd);
        chunks.length = 0;
        reject(hookErrors.requestTimeout());
      },
      Math.max(0, deadline - Date.now()),
    );
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** A body given whole (the panel's test event), held to the same limit as a request's. */
export function limitBody(bytes: Buffer, limit: number): BodyResult {
  return bytes.length > limit ? oversized(bytes, bytes.length) : { tooLarge: false, bytes };
}

function oversized(bytes: Buffer, received: number): BodyResult {
  return { tooLarge: true, head: bytes.subarray(0, REJECTED_BODY_BYTES), received };
}
