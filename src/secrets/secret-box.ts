import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * What a sealed value starts with. Values stored before there was a key lack it, so the two are
 * told apart; `v1` leaves room for another format later.
 */
export const SEALED_PREFIX = 'enc:v1:';

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** A stored secret that none of the keys opens. */
export class SecretUnreadableError extends Error {
  override name = 'SecretUnreadableError';
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/**
 * Encrypts the secrets the service stores (AES-256-GCM, a random 12-byte IV per value) and opens
 * them again. Stored as `enc:v1:` and the base64url of IV, tag and ciphertext. Without a key
 * (PostgreSQL without SECRETS_KEY) values are stored as they are.
 */
export class SecretBox {
  private readonly current: Buffer | undefined;
  private readonly readers: readonly Buffer[];

  /**
   * @param current the key new values are sealed with (SECRETS_KEY or the generated one)
   * @param previous keys that still open values sealed before a rotation (SECRETS_KEY_PREVIOUS)
   */
  constructor(current: Buffer | undefined, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous])
      if (key && key.length !== KEY_BYTES)
        throw new Error(`a secrets key must be ${KEY_BYTES} bytes`);
    this.current = current;
    this.readers = [current, ...previous].filter((key): key is Buffer => key !== undefined);
  }

  /** Whether values are sealed, or stored as they are. */
  get encrypts(): boolean {
    return this.current !== undefined;
  }

  seal(plain: string): string;
  seal(plain: string | null | undefined): string | null;
  seal(plain: string | null | undefined): string | null {
    if (plain === null || plain === undefined) return null;
    if (!this.current) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return SEALED_PREFIX + Buffer.concat([iv, tag, sealed]).toString('base64url');
  }

  /**
   * The secret a stored value holds. A value stored before there was a key is returned as it is
   * (start-up seals those); a sealed one no key opens throws SecretUnreadableError.
   */
  open(stored: string): string;
  open(stored: string | null): string | null;
  open(stored: string | null): string | null {
    if (stored === null || !isSealed(stored)) return stored;
    const bytes = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
    if (bytes.length >= IV_BYTES + TAG_BYTES) {
      for (const key of this.readers) {
        const plain = tryOpen(key, bytes);
        if (plain !== undefined) return plain;
      }
    }
    throw new SecretUnreadableError(
      this.readers.length === 0
        ? 'a stored secret is encrypted, and SECRETS_KEY is not set'
        : 'a stored secret is encrypted with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS',
    );
  }
}

function tryOpen(key: Buffer, bytes: Buffer): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    const plain = decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES));
    return Buffer.concat([plain, decipher.final()]).toString('utf8');
  } catch {
    // The tag does not match: another key sealed it (or it was altered).
    return undefined;
  }
}
