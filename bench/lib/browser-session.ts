import type { Browser, BrowserContext } from 'playwright-core';

/** A signed-in browser's cookies, reused by every fresh context of a run. */
export type SignedIn = Awaited<ReturnType<BrowserContext['storageState']>>;

/** A screen the panel is measured at. */
export interface ScreenSize {
  viewport: { width: number; height: number };
  isMobile: boolean;
}

/** A fresh context (nothing cached) of this size, signed in, asking for gzip as the goals say. */
export function contextOf(
  browser: Browser,
  origin: string,
  signedIn: SignedIn | undefined,
  size: ScreenSize,
): Promise<BrowserContext> {
  return browser.newContext({
    baseURL: origin,
    viewport: size.viewport,
    isMobile: size.isMobile,
    storageState: signedIn,
    extraHTTPHeaders: { 'accept-encoding': 'gzip' },
  });
}

/** Signs `admin` in through the login form once; its session for the contexts that follow. */
export async function signIn(
  browser: Browser,
  origin: string,
  admin: { email: string; password: string },
  size: ScreenSize,
): Promise<SignedIn> {
  const context = await contextOf(browser, origin, undefined, size);
  try {
    const page = await context.newPage();
    await page.goto('/login');
    await page.fill('input[name=email]', admin.email);
    await page.fill('input[name=password]', admin.password);
    await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);
    return await context.storageState();
  } finally {
    await context.close();
  }
}
