import { text } from 'node:stream/consumers';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../config.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/open-database.js';
import { newToken } from '../secrets.js';
import { WorkspacesService } from '../workspaces/workspaces-service.js';
import { AdminsService, MIN_PASSWORD_LENGTH } from './admins-service.js';
import { SessionsService } from './sessions-service.js';

/**
 * `npm run admin -- set-password <email>`: sets a panel admin's password on the database the
 * server uses (the same configuration: environment and .env), creating the admin in the default
 * workspace when nobody has that e-mail. The password is read from standard input when it is not
 * a terminal (`echo "$PASSWORD" | npm run admin -- set-password ...`); at a terminal one is
 * generated and printed once. The admin's sessions end: whoever knew the old password is out.
 */
const USAGE = 'usage: npm run admin -- set-password <email>';

async function main(args: string[]): Promise<void> {
  const [command, email, ...rest] = args;
  if (command !== 'set-password' || !email || rest.length > 0) return fail(USAGE, 2);
  if (!z.email().safeParse(email).success) return fail(`"${email}" is not an e-mail address`);
  const config = loadConfig();

  const generated = process.stdin.isTTY === true;
  const password = generated ? newToken(144) : withoutLineEnd(await text(process.stdin));
  if (password.length < MIN_PASSWORD_LENGTH)
    return fail(
      `the password read from standard input must be at least ${MIN_PASSWORD_LENGTH} characters long`,
    );

  const db = await openDatabase(config);
  try {
    await migrate(db);
    const workspace = await new WorkspacesService(db).ensureDefault(config.defaultChatQuota);
    const { admin, created } = await new AdminsService(db).setPassword(
      email,
      password,
      workspace.id,
    );
    await new SessionsService(db, config.sessionTtlHours).endAll(admin.id);
    process.stderr.write(
      created
        ? `Created the panel admin ${admin.email} in ${workspace.name}.\n`
        : `Set a new password for ${admin.email}; their panel sessions were signed out.\n`,
    );
    if (generated) {
      process.stderr.write('Their new password (shown only now):\n');
      process.stdout.write(`${password}\n`);
    }
    process.stderr.write(`Sign in at ${config.publicBaseUrl}/login\n`);
  } finally {
    await db.close();
  }
}

/** One trailing line break, as `echo` or a here-string adds; everything else is the password. */
function withoutLineEnd(input: string): string {
  return input.replace(/\r?\n$/, '');
}

function fail(message: string, code = 1): void {
  process.stderr.write(`hookprompt admin: ${message}\n`);
  process.exitCode = code;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  fail(error instanceof ConfigError ? `invalid configuration: ${message}` : message);
});
