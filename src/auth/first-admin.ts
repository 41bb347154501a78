import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { newToken } from '../platform/secrets.js';
import type { AdminsService } from './admins-service.js';

/** The sign-in name of the admin created when ADMIN_EMAIL is not set. */
export const GENERATED_ADMIN_EMAIL = 'admin@localhost';

/** Where the generated first password is written, inside DATA_DIR. */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/** How to set a password from the server's shell, whatever the database. */
export const SET_PASSWORD_COMMAND = 'npm run admin -- set-password <email>';

/** How to create an admin from the server's shell, whatever the database. */
export const CREATE_ADMIN_COMMAND = 'npm run admin -- set-password --create <email>';

/**
 * Makes sure someone can sign in to a new installation. ADMIN_EMAIL/ADMIN_PASSWORD name the first
 * admin. Without them, and only for the embedded database kept in DATA_DIR, a random password is
 * written to a file only the service's user can read (never to the log, which often travels
 * further than the machine). That file is never overwritten: a file left by an earlier database
 * keeps its password, which the new admin gets. A memory:// or PostgreSQL database gets no file
 * (it does not live beside DATA_DIR); the log says how to create an admin instead.
 */
export async function createFirstAdmin(
  admins: AdminsService,
  config: Pick<Config, 'admin' | 'publicBaseUrl' | 'dataDir' | 'databaseUrl'>,
  defaultWorkspaceId: string,
  log: Logger,
): Promise<void> {
  if (config.admin) {
    const admin = await admins.createFirst(
      config.admin.email,
      config.admin.password,
      defaultWorkspaceId,
    );
    if (admin) log.info({ adminEmail: admin.email }, 'first panel admin created from ADMIN_EMAIL');
    return;
  }
  if (config.databaseUrl !== undefined) {
    if (!(await admins.anyExists()))
      log.warn(
        `No panel admin exists yet. Create one with \`${CREATE_ADMIN_COMMAND}\` (run with the ` +
          'same configuration as the server), or set ADMIN_EMAIL and ADMIN_PASSWORD.',
      );
    return;
  }
  if (await admins.anyExists()) return;
  const file = resolve(join(config.dataDir, INITIAL_PASSWORD_FILE));
  const kept = await readKeptPassword(file);
  if (kept === '') {
    log.warn(
      { passwordFile: file },
      `No panel admin exists and ${file} is empty; it is left as it is. Create an admin with ` +
        `\`${CREATE_ADMIN_COMMAND}\`, or delete the file and start again.`,
    );
    return;
  }
  const password = kept ?? (await writeNewPassword(file, config.dataDir));
  const admin = await admins.createFirst(GENERATED_ADMIN_EMAIL, password, defaultWorkspaceId);
  if (!admin) return;
  log.warn(
    { adminEmail: admin.email, passwordFile: file },
    `No panel admin existed, so ${admin.email} was created; its password is in ${file}. ` +
      `Sign in at ${config.publicBaseUrl}/login, change the password on the Account page, ` +
      'then delete the file (or set ADMIN_EMAIL and ADMIN_PASSWORD before the first start).',
  );
}

/** The password in a file left by an earlier start ('' for an empty file), or undefined. */
async function readKeptPassword(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeNewPassword(file: string, dataDir: string): Promise<string> {
  const password = newToken(144);
  await mkdir(dataDir, { recursive: true });
  // 'wx': never over an existing file, whatever happened since it was looked for
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}
