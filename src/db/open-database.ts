import type { Config } from '../config.js';
import type { Database } from './database.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  onError?: (error: Error) => void,
): Promise<Database> {
  const { databaseUrl } = config;
  if (databaseUrl === 'memory://') return openPglite(undefined);
  if (databaseUrl) return openPostgres({ url: databaseUrl, onError });
  return openPglite(config.dataDir);
}
