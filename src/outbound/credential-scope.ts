/**
 * A credential follows only the URL it was given for. A stored key, token or header is sent to
 * where its owner sent it: a change that points the requests somewhere else (another URL, another
 * kind of server) keeps it only when the same change gives it again. Otherwise whoever may edit
 * the URL could point it at their own server and collect the key with the next call (a test).
 *
 * `where` is where the requests go before and after the change, written so that equal means the
 * same server (a URL; a kind and a URL). `given` is the credential the change gives: a value to
 * store, null to clear it, undefined when it says nothing about it.
 *
 * Returns what to store: the given credential, else null (cleared) when the requests now go
 * elsewhere, else undefined (the stored one is kept).
 */
export function credentialAfterChange<Credential>(
  where: { before: string; after: string },
  given: Credential | null | undefined,
): Credential | null | undefined {
  if (given !== undefined) return given;
  return where.after === where.before ? undefined : null;
}
