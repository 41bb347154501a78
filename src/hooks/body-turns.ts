/**
 * From this size on (after Content-Encoding is undone) a body's checks wait for their own turn of
 * the event loop: they are synchronous and grow with the body. Smaller bodies go on at once.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * Large bodies take turns on the event loop, one body's checks per turn, in arrival order. Else
 * all the bodies that completed in one poll of the sockets are checked back to back, and
 * `/healthz` or a small webhook waits behind every one (docs/scaling.md, accept_when row).
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
