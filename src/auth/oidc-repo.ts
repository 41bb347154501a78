import type { Queryable } from '../db/database.js';

export interface NewOidcSignIn {
  stateHash: string;
  browserHash: string;
  nonce: string;
  codeVerifier: string;
  nextPath: string;
  validMinutes: number;
}

export interface OidcSignInRow {
  nonce: string;
  code_verifier: string;
  next_path: string;
}

export async function insertSignIn(db: Queryable, signIn: NewOidcSignIn): Promise<void> {
  await db.query(
    `insert into oidc_sign_ins (state_hash, browser_hash, nonce, code_verifier, next_path, expires_at)
     values ($1, $2, $3, $4, $5, now() + make_interval(mins => $6))`,
    [
      signIn.stateHash,
      signIn.browserHash,
      signIn.nonce,
      signIn.codeVerifier,
      signIn.nextPath,
      signIn.validMinutes,
    ],
  );
}

/**
 * Uses up the sign-in this state and browser started, while it is valid. A state that matches
 * with another browser's cookie takes nothing, so the browser that started can still finish.
 */
export async function takeSignIn(
  db: Queryable,
  stateHash: string,
  browserHash: string,
): Promise<OidcSignInRow | undefined> {
  const { rows } = await db.query<OidcSignInRow>(
    `delete from oidc_sign_ins
     where state_hash = $1 and browser_hash = $2 and expires_at > now()
     returning nonce, code_verifier, next_path`,
    [stateHash, browserHash],
  );
  return rows[0];
}

export async function deleteExpiredSignIns(db: Queryable): Promise<void> {
  await db.query('delete from oidc_sign_ins where expires_at <= now()');
}
