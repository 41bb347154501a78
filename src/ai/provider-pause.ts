import { setTimeout as delay } from 'node:timers/promises';

/** The longest a provider's `Retry-After` holds back this process's other calls to it. */
export const SHARED_PAUSE_MAX_MS = 5_000;

/**
 * A short pause shared by all calls of one process to one provider. When the provider answers
 * 429 or 503 with `Retry-After`, the event that got the answer waits its whole delay in the
 * queue; the calls about to start for other events wait here too, at most SHARED_PAUSE_MAX_MS,
 * so that a provider asking for a breath is not hit by every worker slot at once.
 */
export class ProviderPause {
  private until = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Holds calls back until `ms` from now (never shortens a pause already longer). */
  pauseFor(ms: number): void {
    this.until = Math.max(this.until, this.now() + Math.min(ms, SHARED_PAUSE_MAX_MS));
  }

  /** Resolves when calls may go ahead; rejects with `signal.reason` if aborted while waiting. */
  async wait(signal: AbortSignal): Promise<void> {
    for (;;) {
      const left = this.until - this.now();
      if (left <= 0) return;
      await delay(left, undefined, { signal });
    }
  }
}
