import argon2 from 'argon2';

// OWASP's argon2id baseline (19 MiB, 2 passes): about 30 ms per sign-in on a small server.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

/** Never throws: a malformed stored hash simply does not match. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time a real check would take, so that the answer time of a failed sign-in does not
 * tell whether the e-mail address belongs to an admin.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword('not the password of anyone');
  await verifyPassword(await dummyHash, password);
  return false;
}
