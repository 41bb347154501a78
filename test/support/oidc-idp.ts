import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import request from 'supertest';

export const OIDC_CLIENT_ID = 'hookprompt-test';
export const OIDC_CLIENT_SECRET = 'a-client-secret-for-the-tests';

/** Who the identity provider signs in next: the claims its ID token and userinfo carry. */
export interface IdpUser {
  email: string;
  email_verified: boolean;
  name?: string;
}

/**
 * node-oidc-provider (the certified OpenID Provider) on loopback, as the company's identity
 * provider. Without a browser it signs `user` in at once, consent given; with `interactive` it
 * shows its own development login page instead (for browser tests). The provider is made at its
 * first request, once the app's callback URL (`redirectUri`) is known.
 */
export class OidcIdp {
  user: IdpUser = { email: 'someone@example.com', email_verified: true, name: 'Someone' };
  private provider: Provider | undefined;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly redirectUri: () => string,
    private readonly interactive: boolean,
  ) {}

  static async start(redirectUri: () => string, interactive = false): Promise<OidcIdp> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const idp = new OidcIdp(server, issuer, redirectUri, interactive);
    server.on('request', (req, res) => {
      idp.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    return idp;
  }

  /** The app's OIDC_* settings for this provider. */
  env(): Record<string, string> {
    return {
      OIDC_ISSUER: this.issuer,
      OIDC_CLIENT_ID,
      OIDC_CLIENT_SECRET,
    };
  }

  /**
   * Follows a browser from the authorization request `url` through this provider (which signs
   * `user` in) until it is sent back to `appBaseUrl`; resolves to that callback URL, not opened.
   */
  async authorize(url: URL, appBaseUrl: string): Promise<URL> {
    const browser = request.agent(this.issuer);
    for (let hop = 0; hop < 10 && !url.href.startsWith(appBaseUrl); hop++) {
      const res = await browser.get(url.pathname + url.search);
      if (res.status !== 302 && res.status !== 303)
        throw new Error(`the identity provider answered ${res.status}: ${res.text.slice(0, 300)}`);
      url = new URL(res.headers.location as string, this.issuer);
    }
    return url;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
  ) {
    const provider = (this.provider ??= this.makeProvider());
    if (!this.interactive && req.url?.startsWith('/interaction/')) {
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({
        accountId: this.user.email,
        clientId: details.params.client_id ?? '',
      });
      grant.addOIDCScope('openid email profile');
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, {
        login: { accountId: this.user.email },
        consent: { grantId },
      });
      return;
    }
    provider.callback()(req, res);
  }

  private makeProvider(): Provider {
    return new Provider(this.issuer, {
      clients: [
        {
          client_id: OIDC_CLIENT_ID,
          client_secret: OIDC_CLIENT_SECRET,
          redirect_uris: [this.redirectUri()],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      findAccount: (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: () => ({ sub, ...this.user }),
      }),
      features: { devInteractions: { enabled: this.interactive } },
      cookies: { keys: ['cookie key of the test identity provider'] },
      pkce: { required: () => true },
      ttl: Object.fromEntries(
        ['AccessToken', 'AuthorizationCode', 'Grant', 'IdToken', 'Interaction', 'Session'].map(
          (artifact) => [artifact, 600],
        ),
      ),
    });
  }
}
