import { createHash } from 'node:crypto';
import { readMigrations } from '../../src/db/migrate.js';

/** Named after the migrations' content, so a changed migration gets a fresh template. */
export const TEMPLATE_DATABASE = `hookprompt_template_${createHash('sha256')
  .update(JSON.stringify(await readMigrations()))
  .digest('hex')
  .slice(0, 12)}`;
