import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../platform/config.js';
import { emailAddress } from '../platform/email-address.js';
import { copyDatabase, CopyRefused } from '../copy-to/copy-database.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/open-database.js';
import { openPostgres } from '../db/postgres.js';
import { newToken } from '../platform/secrets.js';
import { SecretBox } from '../secrets/secret-box.js';
import { KEY_FILE_NAME, openSecretBox } from '../secrets/secrets-key.js';
import { shownUrl } from '../secrets/secret-values.js';
import { rotateStoredSecrets } from '../secrets/stored-secrets.js';
import { WorkspacesService } from '../workspaces/workspaces-service.js';
import { AdminsService, MIN_PASSWORD_LENGTH } from './admins-service.js';
import { SessionsService } from './sessions-service.js';

/**
 * `npm run admin -- set-password [--create] <email>`: sets a panel admin's password on the
 * database the server uses (the same configuration: environment and .env). Only with `--create`
 * does an address nobody has become a new admin (in the default workspace), so a mistyped
 * address never makes one. The password is read from standard input when it is not a terminal
 * (`echo "$PASSWORD" | npm run admin -- set-password ...`); at a terminal one is generated and
 * printed once. The admin's sessions end: whoever knew the old password is out.
 *
 * `npm run admin -- rotate-secrets`: encrypts every stored secret again with SECRETS_KEY.
 *
 * `npm run admin -- copy-to <DATABASE_URL>`: copies everything into an empty PostgreSQL database.
 */
const USAGE =
  'usage: npm run admin -- set-password [--create] <email> | rotate-secrets | copy-to <DATABASE_URL>';

const HELP = `${USAGE}

Sets the password of the panel admin with this e-mail address, on the database the server uses
(the same environment and .env file). The password is read from standard input when that is not
a terminal; at a terminal one is generated and printed once. The admin's panel sessions end.

  --create   create the admin, in the default workspace, when nobody has the address
             (without it, an unknown address is an error and nothing is created)
  --help     show this text

npm run admin -- rotate-secrets

Encrypts every secret stored in the database again with SECRETS_KEY (on the embedded database
without it, with DATA_DIR/secrets.key), reading each with SECRETS_KEY or SECRETS_KEY_PREVIOUS,
in one transaction: a secret neither key opens is an error, named, and nothing is changed.
Prints how many secrets it encrypted again.

TARGET_SECRETS_KEY=<key> npm run admin -- copy-to <DATABASE_URL>

Copies everything stored in the database the configuration names (typically the embedded one;
stop the server first) into the PostgreSQL database at DATABASE_URL, which must exist and hold
no hookprompt data: workspaces, admins, API keys, channels, providers, prices, destinations,
alerts, trials and events with their deliveries. Every secret is encrypted again with
TARGET_SECRETS_KEY, the SECRETS_KEY the target's servers will run with (openssl rand -hex 32).
Prints the count of each table on both sides; exits 0 only when they are equal.
`;

type Command =
  | { kind: 'help' }
  | { kind: 'set-password'; email: string; create: boolean }
  | { kind: 'rotate-secrets' }
  | { kind: 'copy-to'; url: string };

function parseCommand(args: string[]): Command | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { create: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch {
    return undefined;
  }
  if (parsed.values.help) return { kind: 'help' };
  const [command, email, ...rest] = parsed.positionals;
  if (command === 'rotate-secrets' && !email && !parsed.values.create)
    return { kind: 'rotate-secrets' };
  if (command === 'copy-to' && email && rest.length === 0 && !parsed.values.create)
    return { kind: 'copy-to', url: email };
  if (command !== 'set-password' || !email || rest.length > 0) return undefined;
  return { kind: 'set-password', email, create: parsed.values.create === true };
}

async function main(args: string[]): Promise<void> {
  const command = parseCommand(args);
  if (!command) return fail(`${USAGE} (--help says more)`, 2);
  if (command.kind === 'help') return void process.stdout.write(HELP);
  if (command.kind === 'rotate-secrets') return rotateSecrets();
  if (command.kind === 'copy-to') return copyTo(command.url);
  const { email, create } = command;
  if (!emailAddress().safeParse(email).success) return fail(`"${email}" is not an e-mail address`);
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
    const workspaces = new WorkspacesService(db);
    const workspace = create ? await workspaces.ensureDefault(config.defaultChatQuota) : undefined;
    const result = await new AdminsService(db, workspaces).setPassword(
      email,
      password,
      workspace?.id,
    );
    if (!result)
      return fail(
        `no panel admin has the address ${email}; add --create to create one (in the default workspace)`,
      );
    const { admin, created } = result;
    await new SessionsService(db, config.sessionTtlHours).endAll(admin.id);
    process.stderr.write(
      created
        ? `Created the panel admin ${admin.email} in ${workspace?.name}.\n`
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

async function rotateSecrets(): Promise<void> {
  const config = loadConfig();
  if (config.databaseUrl === 'memory://')
    return fail('DATABASE_URL=memory:// keeps no secrets beyond its process: nothing to rotate');
  const db = await openDatabase(config);
  try {
    await migrate(db);
    const { box, source } = await openSecretBox(config, db.kind);
    if (!box.encrypts)
      return fail('SECRETS_KEY is not set: there is no key to encrypt the stored secrets with');
    const count = await rotateStoredSecrets(db, box);
    const key = source === 'SECRETS_KEY' ? 'SECRETS_KEY' : `${config.dataDir}/${KEY_FILE_NAME}`;
    process.stdout.write(`Re-encrypted ${count} stored secrets with ${key}.\n`);
  } finally {
    await db.close();
  }
}

async function copyTo(url: string): Promise<void> {
  const config = loadConfig();
  const targetKey = config.secrets.targetKey;
  if (!/^postgres(ql)?:\/\//.test(url))
    return fail('the target must be a PostgreSQL database: postgres://user@host:5432/name');
  if (!targetKey)
    return fail(
      "TARGET_SECRETS_KEY is not set: give the key the target's servers will run with as SECRETS_KEY (openssl rand -hex 32)",
    );
  if (config.databaseUrl === 'memory://')
    return fail('DATABASE_URL=memory:// keeps nothing beyond its process: nothing to copy');
  if (config.databaseUrl === url)
    return fail('the target is the database the configuration names: nothing to copy');
  const source = await openDatabase(config);
  const target = openPostgres({ url, max: 2 });
  try {
    await migrate(source);
    const { box } = await openSecretBox(config, source.kind);
    const targetBox = new SecretBox(Buffer.from(targetKey, 'hex'));
    const counts = await copyDatabase(source, target, { source: box, target: targetBox });
    const width = Math.max(...counts.map(({ table }) => table.length));
    for (const { table, source: from, target: to } of counts)
      process.stdout.write(`${table.padEnd(width)}  ${from} → ${to}\n`);
    const unequal = counts.filter((count) => count.source !== count.target);
    if (unequal.length > 0)
      return fail(`the counts differ in ${unequal.map((c) => c.table).join(', ')}`);
    process.stdout.write(
      `Copied into ${shownUrl(url)}. Start hookprompt there with DATABASE_URL set to it and ` +
        'SECRETS_KEY set to the TARGET_SECRETS_KEY used here.\n',
    );
  } catch (error) {
    if (error instanceof CopyRefused) return fail(error.message);
    throw error;
  } finally {
    await Promise.all([source.close(), target.close()]);
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
