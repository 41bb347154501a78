import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { SecretUnreadableError, type SecretBox } from './secret-box.js';
import { columnName, SECRET_COLUMNS, type SecretColumn } from './secret-columns.js';
import * as repo from './stored-secrets-repo.js';
import { isSecret, storedForm } from './secret-values.js';

/** A stored secret that the keys given cannot open, named by table, column and row. */
export class StoredSecretError extends Error {
  override name = 'StoredSecretError';
}

/**
 * At start-up: seals the secrets stored before there was a key (and those a migration moved
 * where they are sealed: the webhook token, URLs with credentials or a query string), in one
 * transaction, and makes
 * sure the keys open what is sealed already, so that a missing or wrong key stops the start
 * instead of failing every signature later. Without a key, says once that secrets are stored as
 * they are.
 */
export async function prepareStoredSecrets(
  db: Database,
  box: SecretBox,
  log: Logger,
): Promise<void> {
  if (!box.encrypts)
    log.warn(
      'SECRETS_KEY is not set: secrets are stored in the database unencrypted (see "Secrets at rest" in docs/reliability.md)',
    );
  const sealed = await db.transaction(async (tx) => {
    await repo.lockStoredSecrets(tx);
    let count = 0;
    for (const secret of SECRET_COLUMNS) {
      const newest = await repo.newestSealedValue(tx, secret);
      if (newest) openOrExplain(box, secret, newest, 'the start stopped');
      if (!box.encrypts) continue;
      const plain = await repo.plainValues(tx, secret);
      count += await repo.writeValues(
        tx,
        secret,
        plain
          .filter(({ value }) => isSecret(secret.kind, value))
          .map(({ id, value }) => ({ id, value: box.seal(value), was: value })),
      );
    }
    return count;
  });
  if (sealed > 0) log.info({ sealed }, 'stored secrets encrypted');
}

/**
 * `npm run admin -- rotate-secrets`: seals every stored secret again with the box's key,
 * opening each with any of its keys, in one transaction: a value none opens changes nothing.
 * A URL that holds no secret stays as it is. Resolves to the number of values sealed again.
 */
export async function rotateStoredSecrets(db: Database, box: SecretBox): Promise<number> {
  if (!box.encrypts)
    throw new StoredSecretError('SECRETS_KEY is not set: there is no key to encrypt with');
  return db.transaction(async (tx) => {
    await repo.lockStoredSecrets(tx);
    let count = 0;
    for (const secret of SECRET_COLUMNS) {
      const rows = await repo.allValuesForUpdate(tx, secret);
      const writes = rows
        .map((row) => ({
          id: row.id,
          value: storedForm(
            box,
            secret.kind,
            openOrExplain(box, secret, row, 'nothing was changed'),
          ),
          was: row.value,
        }))
        .filter((write) => write.value !== write.was);
      count += await repo.writeValues(tx, secret, writes);
    }
    return count;
  });
}

function openOrExplain(
  box: SecretBox,
  secret: SecretColumn,
  row: repo.StoredSecret,
  consequence: string,
): string {
  try {
    return box.open(row.value);
  } catch (error) {
    if (!(error instanceof SecretUnreadableError)) throw error;
    const [problem, fix] = box.encrypts
      ? [
          'is encrypted with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS',
          'set SECRETS_KEY_PREVIOUS to the key it was stored with: on the embedded database ' +
            'without SECRETS_KEY, the content of DATA_DIR/secrets.key',
        ]
      : [
          'is encrypted, and SECRETS_KEY is not set',
          'set SECRETS_KEY to the key it was stored with',
        ];
    throw new StoredSecretError(
      `${columnName(secret)} of row ${row.id} ${problem}; ${consequence} (${fix})`,
    );
  }
}
