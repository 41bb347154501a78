import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { newToken } from '../secrets.js';
import type { AdminsService } from './admins-service.js';

/** The sign-in name of the admin created when ADMIN_EMAIL is not set. */
export const GENERATED_ADMIN_EMAIL = 'admin@localhost';

/** Where the generated first password is written, inside DATA_DIR. */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/**
 * Makes sure someone can sign in to a new installation. ADMIN_EMAIL/ADMIN_PASSWORD name the first
 * admin; without them a random password is generated and written to a file only the service's
 * user can read (never to the log, which often travels further than the machine). No admin is
 * created when one exists.
 */
export async function createFirstAdmin(
  admins: AdminsService,
  config: Pick<Config, 'admin' | 'publicBaseUrl' | 'dataDir'>,
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
  const password = newToken(144);
  const admin = await admins.createFirst(GENERATED_ADMIN_EMAIL, password, defaultWorkspaceId);
  if (!admin) return;
  const file = resolve(join(config.dataDir, INITIAL_PASSWORD_FILE));
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  log.warn(
    { adminEmail: admin.email, passwordFile: file },
    `No panel admin existed, so ${admin.email} was created; its password is in ${file}. ` +
      `Sign in at ${config.publicBaseUrl}/login, change the password on the Account page, ` +
      'then delete the file (or set ADMIN_EMAIL and ADMIN_PASSWORD before the first start).',
  );
}
