import type { ReceivingChannel } from './ingest-repo.js';

/**
 * Recently seen channels by webhook-token hash, so that a busy URL is not looked up in the
 * database for every request. It is only a shortcut: the statement that stores an event checks
 * the channel again (see storeEventBatch), so a stale entry can never let an event through after
 * its channel was disabled, deleted or given a new URL. Entries are dropped when any process
 * changes a channel (a database notification) and expire after `ttlMs` in any case.
 * Unknown tokens are never cached, so guessing cannot fill it.
 */
export class ChannelCache {
  private readonly entries = new Map<string, { channel: ReceivingChannel; expiresAt: number }>();

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(tokenHash: string): ReceivingChannel | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.channel;
    this.entries.delete(tokenHash);
    return undefined;
  }

  set(channel: ReceivingChannel): void {
    if (this.entries.size >= this.maxEntries) {
      // Maps keep insertion order: the first key is the oldest entry.
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(channel.webhook_token_hash, { channel, expiresAt: Date.now() + this.ttlMs });
  }

  /** Drops one channel's entry, or every entry when `tokenHash` is empty (changes were missed). */
  forget(tokenHash: string): void {
    if (tokenHash) this.entries.delete(tokenHash);
    else this.entries.clear();
  }
}
