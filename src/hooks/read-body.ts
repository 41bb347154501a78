import type { IncomingMessage } from 'node:http';

/** How much of an oversized body is kept, so admins can see what the sender tried to send. */
export const OVERSIZE_HEAD_BYTES = 1024;

export type BodyResult = { tooLarge: false; bytes: Buffer } | { tooLarge: true; head: Buffer };

/**
 * Reads the request body up to `limit` bytes. Past the limit nothing more is kept but the rest
 * is still read and dropped, so the sender reliably gets our answer instead of a reset connection.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let kept = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) tooLarge = true;
      if (tooLarge && kept >= OVERSIZE_HEAD_BYTES) return;
      chunks.push(chunk);
      kept += chunk.length;
    });
    req.on('end', () => {
      const all = Buffer.concat(chunks);
      resolve(tooLarge ? oversized(all) : { tooLarge: false, bytes: all });
    });
    req.on('error', reject);
  });
}

/** A body given whole (the panel's test event), held to the same limit as a request's. */
export function limitBody(bytes: Buffer, limit: number): BodyResult {
  return bytes.length > limit ? oversized(bytes) : { tooLarge: false, bytes };
}

function oversized(bytes: Buffer): BodyResult {
  return { tooLarge: true, head: bytes.subarray(0, OVERSIZE_HEAD_BYTES) };
}
