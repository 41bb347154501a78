import type { CookieOptions, Request, Response } from 'express';
import type { Config } from '../platform/config.js';
import { newToken } from '../platform/secrets.js';

/** The panel's cookies. Over HTTPS they get the `__Host-` prefix: Secure, this host, path /. */
export interface PanelCookies {
  session: string;
  /** Carries the sign-in form's CSRF token until a session exists (double submit). */
  login: string;
  /** Binds a started SSO sign-in to the browser that started it. */
  oidc: string;
  options: CookieOptions;
}

export function panelCookies(config: Pick<Config, 'publicBaseUrl'>): PanelCookies {
  const secure = config.publicBaseUrl.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  return {
    session: `${prefix}hookprompt_session`,
    login: `${prefix}hookprompt_login`,
    oidc: `${prefix}hookprompt_oidc`,
    // No expiry on the cookie itself: the browser forgets it when closed, the server when it expires.
    options: { httpOnly: true, sameSite: 'lax', secure, path: '/' },
  };
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export function setCookie(res: Response, cookies: PanelCookies, name: string, value: string): void {
  res.cookie(name, value, cookies.options);
}

export function clearCookie(res: Response, cookies: PanelCookies, name: string): void {
  res.clearCookie(name, cookies.options);
}

/**
 * The CSRF token of the forms shown before a session exists (sign-in, invitation): one per
 * browser, kept in the login cookie, so several open tabs all work.
 */
export function loginFormToken(req: Request, res: Response, cookies: PanelCookies): string {
  let token = readCookie(req, cookies.login);
  if (!token) {
    token = newToken(256);
    setCookie(res, cookies, cookies.login, token);
  }
  return token;
}
