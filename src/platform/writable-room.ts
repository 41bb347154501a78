import type { Writable } from 'node:stream';

/**
 * Resolves once `out` can take more (`drain`), or is gone (`close`: a cancelled download never
 * drains). For exports that write as fast as the client reads, and no faster.
 */
export function room(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
