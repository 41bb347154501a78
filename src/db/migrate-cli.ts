import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { migrate } from './migrate.js';
import { openDatabase } from './open-database.js';

// `npm run migrate`: apply pending migrations to the configured database and exit.
const config = loadConfig();
const log = createLogger(config.logLevel);
// A database that cannot be opened (another process holds the embedded one) is said in a line.
const db = await openDatabase(config).catch((error: unknown) => {
  process.stderr.write(
    `hookprompt migrate: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
try {
  const applied = await migrate(db);
  log.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
} finally {
  await db.close();
}
