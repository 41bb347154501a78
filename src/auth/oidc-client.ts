import * as oidc from 'openid-client';
import type { Config } from '../platform/config.js';

type OidcSettings = NonNullable<Config['oidc']>;

/** What one identity-provider request may take (discovery, keys, code exchange, userinfo). */
const REQUEST_TIMEOUT_S = 10;

/** The scopes every sign-in asks for: who the person is and their e-mail address. */
const SCOPES = 'openid email profile';

/** What the checks of a callback give: the person the identity provider signed in. */
export interface OidcIdentity {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
}

/** The secrets one sign-in keeps between its start and its callback. */
export interface OidcChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * The relying party's side of OpenID Connect, by openid-client: the issuer's discovery document
 * (fetched at the first sign-in and kept; fetched again after a failure), the authorization URL,
 * and the callback's checks. A failure is thrown as openid-client's error, for the caller to
 * turn into a page.
 */
export class OidcClient {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(
    private readonly settings: OidcSettings,
    private readonly redirectUri: string,
  ) {}

  async authorizationUrl(checks: OidcChecks): Promise<URL> {
    return oidc.buildAuthorizationUrl(await this.discovered(), {
      redirect_uri: this.redirectUri,
      scope: SCOPES,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      state: checks.state,
      nonce: checks.nonce,
    });
  }

  /**
   * Exchanges the callback's code and checks the ID token: its signature by the issuer's keys,
   * `iss`, `aud`, `exp` and `nonce` (openid-client), the state and PKCE besides. Claims the ID
   * token leaves out (some issuers put the e-mail only in userinfo) are read from userinfo, for
   * the same subject.
   */
  async identify(callbackUrl: URL, checks: OidcChecks): Promise<OidcIdentity> {
    const configuration = await this.discovered();
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    let claims: Record<string, unknown> | undefined = tokens.claims();
    if (!claims) throw new Error('the token response has no ID token');
    const subject = String(claims.sub);
    if (claims.email === undefined && configuration.serverMetadata().userinfo_endpoint)
      claims = {
        ...claims,
        ...(await oidc.fetchUserInfo(configuration, tokens.access_token, subject)),
      };
    return {
      subject,
      email: typeof claims.email === 'string' ? claims.email.trim() : undefined,
      // Some issuers send the boolean as a string.
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      name: typeof claims.name === 'string' ? claims.name : undefined,
    };
  }

  static newChecks(): OidcChecks {
    return {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    };
  }

  private discovered(): Promise<oidc.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  private discover(): Promise<oidc.Configuration> {
    const issuer = new URL(this.settings.issuer);
    // The configuration allows plain http only for an issuer on this machine.
    const insecure = issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
    return oidc.discovery(
      issuer,
      this.settings.clientId,
      undefined,
      // The method a client is registered with unless told otherwise (OpenID Connect Core 9).
      oidc.ClientSecretBasic(this.settings.clientSecret),
      { execute: [oidc.enableNonRepudiationChecks, ...insecure], timeout: REQUEST_TIMEOUT_S },
    );
  }
}
