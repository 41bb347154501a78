import type { Config } from '../platform/config.js';
import type { Database } from './database.js';
import { openPostgres } from './postgres.js';

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  onError?: (error: Error) => void,
): Promise<Database> {
  const { databaseUrl } = config;
  if (databaseUrl && databaseUrl !== 'memory://')
    return openPostgres({ url: databaseUrl, onError });
  // Loaded only when used: a process on PostgreSQL keeps the embedded database's code off its heap.
  const { openPglite } = await import('./pglite.js');
  return openPglite(databaseUrl === 'memory://' ? undefined : config.dataDir, onError);
}
