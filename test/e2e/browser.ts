import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

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
