import type { Queryable } from '../db/database.js';
import { cacheSavings, type CacheSavings } from './reply-cache-repo.js';

/** What the channels' reply caches saved a workspace (the panel's Workspace page). */
export class ReplyCacheService {
  constructor(private readonly db: Queryable) {}

  /** Events received this UTC month that were replied from the cache, and what those replies cost. */
  savingsThisMonth(workspaceId: string, now = new Date()): Promise<CacheSavings> {
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    return cacheSavings(this.db, workspaceId, from, to);
  }
}
