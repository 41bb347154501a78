import request from 'supertest';
import type { Response } from 'supertest';
import { useFixture } from '../support/harness.js';
import type { TestApp } from '../support/test-app.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct horse battery';
/** Environment for a test app whose first admin is ADMIN_EMAIL. */
export const ADMIN_ENV = { ADMIN_EMAIL, ADMIN_PASSWORD };

/** The value of a hidden `_csrf` field in a page. */
export function csrfIn(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF field in the page');
  return match[1];
}

/** The value of the named cookie set by a response, if it sets one. */
export function cookieSet(res: Response, name: string): string | undefined {
  const header = res.headers['set-cookie'] as unknown as string[] | undefined;
  const line = header?.find((cookie) => cookie.startsWith(`${name}=`));
  return line?.slice(name.length + 1).split(';')[0];
}

/** A browser-like panel user: keeps cookies, sends forms with the page's CSRF token. */
export class PanelClient {
  readonly agent;
  csrf = '';

  constructor(readonly app: TestApp) {
    this.agent = request.agent(app.baseUrl);
  }

  /** Signs in through the login form; resolves to the answer of the form post. */
  async signIn(email = ADMIN_EMAIL, password = ADMIN_PASSWORD, next = ''): Promise<Response> {
    const login = await this.agent.get('/login').set('Accept', 'text/html');
    const res = await this.agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrfIn(login.text), email, password, next });
    if (res.status === 303) this.csrf = csrfIn((await this.page('/account')).text);
    return res;
  }

  page(path: string) {
    return this.agent.get(path).set('Accept', 'text/html');
  }

  /** Posts a form as the page would, with this session's CSRF token unless one is given. */
  form(path: string, fields: Record<string, string> = {}) {
    return this.agent
      .post(path)
      .set('Accept', 'text/html')
      .type('form')
      .send({ _csrf: this.csrf, ...fields });
  }

  /** Opens an invitation link and joins with this password; resolves to the form post's answer. */
  async acceptInvitation(link: string, password: string): Promise<Response> {
    const path = new URL(link).pathname;
    const form = await this.page(path);
    const res = await this.agent
      .post(path)
      .set('Accept', 'text/html')
      .type('form')
      .send({
        _csrf: form.status === 200 ? csrfIn(form.text) : '',
        password,
        confirm_password: password,
      });
    if (res.status === 303) this.csrf = csrfIn((await this.page('/account')).text);
    return res;
  }

  /** Creates a channel through the New channel form; resolves to its id. */
  async createChannel(name = 'Orders', template = 'Order {{order.id}}'): Promise<string> {
    const res = await this.form('/channels', { name, template, enabled: 'on' });
    const id = /^\/channels\/(\d+)$/.exec(res.headers.location ?? '')?.[1];
    if (res.status !== 303 || !id)
      throw new Error(`createChannel: ${res.status} ${res.text.slice(0, 300)}`);
    return id;
  }

  /** The webhook URL shown in the channel editor. */
  async webhookUrl(channelId: string): Promise<string> {
    const html = (await this.page(`/channels/${channelId}`)).text;
    const url = /id="webhook-url" value="([^"]+)"/.exec(html)?.[1];
    if (!url) throw new Error('no webhook URL in the editor');
    return url;
  }
}

/**
 * A panel user signed in as the first admin (ADMIN_ENV), registered like the harness's `use…`:
 * `const client = useSignedInAdmin(app)` after `useTestApp({ env: ADMIN_ENV })`.
 */
export function useSignedInAdmin(app: TestApp): PanelClient {
  return useFixture(
    async () => {
      const client = new PanelClient(app);
      const res = await client.signIn();
      if (res.status !== 303)
        throw new Error(`useSignedInAdmin: signing in answered ${res.status}`);
      return client;
    },
    { stop: () => undefined },
  );
}

/** The one-time sign-in link on the page shown after inviting an admin. */
export function invitationLink(html: string): string {
  const link = /id="invitation-link" class="secret-box" value="([^"]+)"/.exec(html)?.[1];
  if (!link) throw new Error('no invitation link in the page');
  return unescapeHtml(link);
}

/**
 * Another admin, added to the inviter's current workspace the way the panel does it: the
 * inviter adds the e-mail address, the new admin opens the one-time link and chooses a password.
 * They join as an owner unless `role` says otherwise (the panel's picker defaults to editor).
 */
export async function inviteAdmin(
  inviter: PanelClient,
  email: string,
  password: string,
  role: 'owner' | 'editor' | 'viewer' = 'owner',
): Promise<PanelClient> {
  const invited = await inviter.form('/workspace/admins', { email, role });
  if (invited.status !== 201) throw new Error(`inviteAdmin: ${invited.status}`);
  const guest = new PanelClient(inviter.app);
  const joined = await guest.acceptInvitation(invitationLink(invited.text), password);
  if (joined.status !== 303) throw new Error(`inviteAdmin: joining answered ${joined.status}`);
  return guest;
}

/** Markup that would run script: inline <script> blocks, event handler attributes, style attributes. */
export function inlineCode(html: string): string[] {
  const found: string[] = [];
  for (const match of html.matchAll(/<script\b[^>]*>/gi))
    if (!/\bsrc=/.test(match[0])) found.push(match[0]);
  for (const match of html.matchAll(/<[a-z][^>]*\s(on[a-z]+|style)\s*=/gi)) found.push(match[0]);
  return found;
}

/** Text as the browser shows it, from EJS-escaped markup. */
export function unescapeHtml(text: string): string {
  return text
    .replaceAll('&#34;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
