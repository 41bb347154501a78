/**
 * The memory that the receiver's decoders of compressed bodies may hold at once, in bytes. A few
 * bytes of brotli make its decoder fill a ring buffer as large as the window the stream names
 * (16 MiB), so each decoder is charged its worst case before it starts; one that does not fit is
 * not started, and its sender is told to come back (503). The budget is what the process holds
 * whatever senders do, not what a typical body needs.
 */
export class DecodeBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  /**
   * Takes `bytes` of the budget, and returns the function that gives them back (once, however
   * often it is called); undefined when they do not fit now. A charge larger than the whole
   * budget takes all of it: such a decoder runs alone, rather than never.
   */
  take(bytes: number): (() => void) | undefined {
    const charge = Math.min(bytes, this.limitBytes);
    if (this.held + charge > this.limitBytes) return undefined;
    this.held += charge;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= charge;
    };
  }

  /** The bytes taken now. */
  get inUse(): number {
    return this.held;
  }
}
