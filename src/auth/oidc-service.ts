import { currentOrigin } from '../audit/audit-context.js';
import { recordAudit } from '../audit/record-audit.js';
import type { Database, Queryable } from '../db/database.js';
import type { Config } from '../platform/config.js';
import { emailAddress } from '../platform/email-address.js';
import { AppError } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import { sha256Hex } from '../platform/secrets.js';
import * as admins from './admins-repo.js';
import type { Admin } from './admins-service.js';
import { OidcClient, type OidcIdentity } from './oidc-client.js';
import * as repo from './oidc-repo.js';

type OidcSettings = NonNullable<Config['oidc']>;

/** How long a started sign-in may take at the identity provider. */
const SIGN_IN_VALID_MINUTES = 10;

export interface OidcSignedIn {
  admin: Admin;
  /** True when this sign-in made the account. */
  created: boolean;
  /** The local path the sign-in was started from. */
  nextPath: string;
}

const isEmail = emailAddress();

/** openid-client's words for what failed, and its code (`OAUTH_JWT_CLAIM_COMPARISON_FAILED`, …). */
const reasonOf = (error: unknown): string =>
  error instanceof Error
    ? `${error.message}${'code' in error ? ` (${String(error.code)})` : ''}`
    : String(error);

/** A callback that cannot sign anyone in: shown as a page, under 500, and no session starts. */
const signInFailed = (detail: string) =>
  new AppError(400, 'sso_failed', 'Sign-in failed', `${detail} Go back and sign in again.`);

const signInRefused = (detail: string) => new AppError(403, 'sso_refused', 'Not allowed', detail);

/**
 * Sign-in with the company's identity provider: a sign-in started for one browser, its callback
 * checked, and the admin it stands for, made at the first sign-in when the address's domain is
 * allowed. Starting a session is the panel's, as for password sign-in.
 */
export class OidcSignIns {
  private readonly client: OidcClient;

  constructor(
    private readonly db: Database,
    private readonly settings: OidcSettings,
    publicBaseUrl: string,
    /** Where an account made by a sign-in gets its membership: the first (default) workspace. */
    private readonly firstWorkspaceId: () => string,
    private readonly log: Logger,
  ) {
    this.client = new OidcClient(settings, OidcSignIns.redirectUri(publicBaseUrl));
  }

  /** The address to register at the identity provider. */
  static redirectUri(publicBaseUrl: string): string {
    return `${publicBaseUrl}/auth/oidc/callback`;
  }

  /**
   * Starts a sign-in for the browser holding `browserKey` (its cookie's value): the URL of the
   * issuer's authorization endpoint to send it to.
   */
  async start(browserKey: string, nextPath: string): Promise<URL> {
    const checks = OidcClient.newChecks();
    let url: URL;
    try {
      url = await this.client.authorizationUrl(checks);
    } catch (error) {
      this.log.warn(
        { reason: reasonOf(error), issuer: this.settings.issuer },
        'SSO discovery failed',
      );
      throw new AppError(
        503,
        'sso_unavailable',
        'Sign-in unavailable',
        `${this.settings.name} could not be reached just now. Try again in a moment.`,
      );
    }
    await repo.deleteExpiredSignIns(this.db);
    await repo.insertSignIn(this.db, {
      stateHash: sha256Hex(checks.state),
      browserHash: sha256Hex(browserKey),
      nonce: checks.nonce,
      codeVerifier: checks.codeVerifier,
      nextPath,
      validMinutes: SIGN_IN_VALID_MINUTES,
    });
    return url;
  }

  /**
   * Finishes the sign-in a callback answers, in the browser that started it, or throws the page
   * that says why not. The started sign-in is used up first, whatever follows: a callback works
   * once.
   */
  async finish(callbackUrl: URL, browserKey: string | undefined): Promise<OidcSignedIn> {
    const state = callbackUrl.searchParams.get('state');
    const started =
      state && browserKey
        ? await repo.takeSignIn(this.db, sha256Hex(state), sha256Hex(browserKey))
        : undefined;
    if (!started)
      throw signInFailed(
        'This sign-in was not started in this browser, was already used, or took longer than ' +
          `${SIGN_IN_VALID_MINUTES} minutes.`,
      );
    let identity: OidcIdentity;
    try {
      identity = await this.client.identify(callbackUrl, {
        state: state as string,
        nonce: started.nonce,
        codeVerifier: started.code_verifier,
      });
    } catch (error) {
      // The reason, not the error: its cause may hold the ID token's claims.
      this.log.warn({ reason: reasonOf(error) }, 'SSO callback refused');
      throw signInFailed(`${this.settings.name}'s answer did not pass the checks.`);
    }
    const { admin, created } = await this.accountOf(identity);
    this.log.info({ adminId: admin.id, created }, 'admin signed in with SSO');
    return { admin, created, nextPath: started.next_path };
  }

  /** The admin an identity signs in as: theirs, or a new one for an allowed domain. */
  private async accountOf(identity: OidcIdentity): Promise<{ admin: Admin; created: boolean }> {
    const email = identity.email;
    if (!email || !isEmail.safeParse(email).success)
      throw signInRefused(`${this.settings.name} did not tell this service your e-mail address.`);
    if (!identity.emailVerified)
      throw signInRefused(
        `${this.settings.name} has not verified your e-mail address ${email}; ` +
          'only a verified address can sign in.',
      );
    return this.db.transaction(async (tx) => {
      const existing = await admins.findAdminByEmail(tx, email);
      if (existing) return { admin: { id: existing.id, email: existing.email }, created: false };
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      if (!this.settings.allowedDomains.includes(domain))
        throw signInRefused(
          `${email} has no account here, and addresses at ${domain} do not get one by signing ` +
            'in. Ask an admin of hookprompt to invite you.',
        );
      const made = await admins.insertAdminWithoutPassword(tx, email);
      // Made meanwhile by a sign-in of the same person in another tab: theirs already.
      if (!made) return this.madeMeanwhile(tx, email);
      await this.joinFirstWorkspace(tx, { id: made.id, email: made.email });
      return { admin: { id: made.id, email: made.email }, created: true };
    });
  }

  private async madeMeanwhile(
    tx: Queryable,
    email: string,
  ): Promise<{ admin: Admin; created: boolean }> {
    const row = await admins.findAdminByEmail(tx, email);
    if (!row) throw signInFailed('Your account could not be made.');
    return { admin: { id: row.id, email: row.email }, created: false };
  }

  /**
   * The one place an account made by a sign-in joins a workspace, the way every admin joins
   * one, with the role OIDC_DEFAULT_ROLE names.
   */
  private async joinFirstWorkspace(tx: Queryable, admin: Admin): Promise<void> {
    const workspaceId = this.firstWorkspaceId();
    const role = this.settings.defaultRole;
    await admins.addMembership(tx, admin.id, workspaceId, role);
    await recordAudit(tx, {
      workspaceId,
      action: 'admin.create',
      target: { kind: 'admin', id: admin.id },
      changes: { email: admin.email, role, via: 'oidc' },
      origin: { ...currentOrigin(), actor: { kind: 'admin', id: admin.id, name: admin.email } },
    });
  }
}
