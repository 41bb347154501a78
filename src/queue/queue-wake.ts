/**
 * What an idle queue loop sleeps on: the poll interval, cut short by `wake()` (a NOTIFY, a freed
 * slot, a finished item) or by a timer set with `wakeIn()`. A wake that comes while the loop is
 * not asleep is kept for its next sleep, so none is lost.
 */
export class QueueWake {
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  wake(): void {
    const wakeSleeper = this.wakeSleeper;
    this.wakeSleeper = undefined;
    if (wakeSleeper) wakeSleeper();
    else this.woken = true;
  }

  /** Forgets the wakes so far: the claim about to be made sees what they announced. */
  forget(): void {
    this.woken = false;
  }

  /** Wakes the sleeper in `ms`. One timer: the earliest time wins. */
  wakeIn(ms: number): void {
    const at = Date.now() + Math.max(0, ms);
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, at - Date.now());
    this.timer.unref();
  }

  cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves after `ms`, at the next wake, or at once if woken since the last `forget()`. */
  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = undefined;
        resolve();
      }, ms);
      this.wakeSleeper = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
