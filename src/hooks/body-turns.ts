/**
 * From this size on (after Content-Encoding is undone) a body's checks wait for their own turn of
 * the event loop. Checking a body is synchronous and grows with its size: about 10 ms for an
 * 840 KB order (UTF-8 decoding, the JSON check or `accept_when`'s paths, hashing). Below this
 * size a body takes well under a millisecond and goes on at once, as before.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * Large bodies take turns on the event loop: one body's checks per turn, in the order they
 * arrived. Without turns, every body whose last bytes arrived in the same poll of the sockets was
 * checked before anything else ran: eight 840 KB bodies held the loop for 80 ms or more, and
 * `/healthz`, a small webhook or a database answer waited behind all of them. With turns, the
 * sockets are read again between two large bodies, so what else is ready waits behind one at
 * most. The work is the same; only its order changes.
 */
export class BodyTurns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves on a later turn of the event loop than the last body's, one body per turn. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** How many bodies wait for their turn now. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(this.grant);
  }

  // Runs as an immediate: the body given its turn is checked in the microtasks that follow it,
  // and the next turn, scheduled from here, is an immediate of the next loop iteration, after the
  // sockets have been polled.
  private readonly grant = (): void => {
    this.scheduled = false;
    this.waiting.shift()?.();
    this.schedule();
  };
}
