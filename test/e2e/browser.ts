import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../panel/panel-client.js';

/** Debian's Chromium; the browser tests need it and are skipped without it. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);
export const NOT_RUN = `browser tests were not run: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * How far a page reaches past the screen's width, in CSS pixels (0 when it fits). Measured
 * against the layout viewport (`clientWidth`, the device width the page's viewport meta asks
 * for), not `window.innerWidth`: a phone browser zooms out to show content wider than the
 * screen, and innerWidth then grows with it, hiding the overflow.
 */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );
}

/**
 * Collects what the panel must never produce into `problems`: script errors and console errors
 * (CSP violations are reported there), except those `expected` says a test caused on purpose.
 */
export function watchForProblems(
  page: Page,
  problems: string[],
  expected: (consoleError: string) => boolean = () => false,
): void {
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
}

/** Signs in as the test admin (ADMIN_ENV) on the login page; resolves on the channel list. */
export async function signIn(page: Page): Promise<void> {
  await page.goto('/login');
  await page.fill('input[name=email]', ADMIN_EMAIL);
  await page.fill('input[name=password]', ADMIN_PASSWORD);
  await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);
}
