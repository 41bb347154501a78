import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../platform/config.js';
import { KEY_BYTES, SecretBox } from './secret-box.js';

/** The key generated for the embedded database, in its DATA_DIR. */
export const KEY_FILE_NAME = 'secrets.key';

/** Where the key that seals new secrets comes from. */
export type KeySource = 'SECRETS_KEY' | 'key file' | 'new key file' | 'memory' | 'none';

/**
 * The box for this process's secrets: SECRETS_KEY when set; otherwise, on the embedded database,
 * the key in `DATA_DIR/secrets.key` (generated at the first start) or, for `memory://`, a key of
 * the process's own; on PostgreSQL none (secrets stored as they are). SECRETS_KEY_PREVIOUS opens
 * what the key before it sealed.
 */
export async function openSecretBox(
  config: Pick<Config, 'secrets' | 'databaseUrl' | 'dataDir'>,
  database: 'postgres' | 'pglite',
): Promise<{ box: SecretBox; source: KeySource }> {
  const { key, previousKey } = config.secrets;
  const previous = previousKey ? [Buffer.from(previousKey, 'hex')] : [];
  let current: Buffer | undefined;
  let source: KeySource;
  if (key) [current, source] = [Buffer.from(key, 'hex'), 'SECRETS_KEY'];
  else if (database === 'postgres') [current, source] = [undefined, 'none'];
  else if (config.databaseUrl === 'memory://')
    [current, source] = [randomBytes(KEY_BYTES), 'memory'];
  else [current, source] = await keyFile(config.dataDir);
  return { box: new SecretBox(current, previous), source };
}

/**
 * Reads the embedded database's key, or generates it at the first start: readable by the
 * service's user only, and written whole or not at all (linked into place once complete, which
 * also keeps a key another process wrote first).
 */
async function keyFile(dataDir: string): Promise<[Buffer, 'key file' | 'new key file']> {
  const path = join(dataDir, KEY_FILE_NAME);
  const existing = await readKey(path);
  if (existing) return [existing, 'key file'];
  await mkdir(dataDir, { recursive: true });
  const draft = `${path}.${process.pid}`;
  // A draft left by a crash keeps its mode when written over: removed, it is made anew.
  await rm(draft, { force: true });
  await writeFile(draft, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600 });
  let made = true;
  try {
    await link(draft, path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      made = false;
    });
  } finally {
    await rm(draft, { force: true });
  }
  return [(await readKey(path)) as Buffer, made ? 'new key file' : 'key file'];
}

async function readKey(path: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!/^[0-9a-f]{64}\s*$/i.test(text))
    throw new Error(
      `${path} does not hold a secrets key (64 hex digits); restore it from a backup`,
    );
  return Buffer.from(text.trim(), 'hex');
}
