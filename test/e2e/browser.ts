import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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
  collectVisits(page, problems);
}

/** axe-core's script, evaluated in each checked page (the panel's CSP allows no script tag). */
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
/** The impacts a page may not have: a test fails on any serious or critical violation. */
const FAILING_IMPACTS = ['serious', 'critical'];

/** The panel pages each test file visited (by the `problems` list it reports into). */
const visits = new WeakMap<string[], { context: BrowserContext; urls: Set<string> }>();

/**
 * Records every page `page` loads, so that checkVisitedPages can run axe-core on each at the end.
 * The check runs on a page of its own in the same context (the same session): never during a
 * test, where it would race the test's clicks and navigations.
 */
export function collectVisits(page: Page, problems: string[]): void {
  const seen = visits.get(problems) ?? { context: page.context(), urls: new Set<string>() };
  visits.set(problems, seen);
  page.on('load', () => {
    const url = new URL(page.url());
    if (url.protocol === 'http:') seen.urls.add(`${url.origin}${url.pathname}${url.search}`);
  });
}

/** One page's axe-core result: its violations by rule and impact. */
export interface AxeCount {
  url: string;
  violations: { id: string; impact: string | null; nodes: number }[];
}

/** Every page's axe counts of the run, for AXE_REPORT=1 (printed per page). */
export const axeCounts: AxeCount[] = [];

/**
 * Runs axe-core on every page collectVisits recorded for `problems` and adds each serious or
 * critical violation to it, naming the page, the rule and the elements.
 */
export async function checkVisitedPages(problems: string[]): Promise<void> {
  const seen = visits.get(problems);
  if (!seen) return;
  const checker = await seen.context.newPage();
  try {
    for (const url of seen.urls) {
      await checker.goto(url);
      await checker.evaluate(AXE_SOURCE);
      // Run in the page, as text: the tests are compiled without the DOM's types.
      const violations = await checker.evaluate<AxeViolation[]>(`axe
        .run({ resultTypes: ['violations'] })
        .then((results) => results.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          targets: v.nodes.map((n) => n.target.join(' ')),
        })))`);
      const path = new URL(url).pathname + new URL(url).search;
      axeCounts.push({
        url: path,
        violations: violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          nodes: v.targets.length,
        })),
      });
      if (process.env.AXE_REPORT)
        console.log(
          `axe ${path}: ${violations.map((v) => `${v.id} (${v.impact}) ×${v.targets.length}`).join(', ') || 'no violation'}`,
        );
      for (const v of violations)
        if (FAILING_IMPACTS.includes(v.impact ?? ''))
          problems.push(
            `axe ${v.id} (${v.impact}) on ${path}: ${v.targets.slice(0, 5).join(', ')}`,
          );
    }
  } finally {
    seen.urls.clear();
    await checker.close();
  }
}

/** A violation as read from axe-core's results: its rule, impact and the elements' selectors. */
interface AxeViolation {
  id: string;
  impact: string | null;
  targets: string[];
}

/** Signs in as the test admin (ADMIN_ENV) on the login page; resolves on the channel list. */
export async function signIn(page: Page): Promise<void> {
  await page.goto('/login');
  await page.fill('input[name=email]', ADMIN_EMAIL);
  await page.fill('input[name=password]', ADMIN_PASSWORD);
  await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);
}

/** A page in a context of its own at 1280×900 on the app, its problems collected, signed in. */
export async function signedInPage(
  browser: Browser,
  baseURL: string,
  problems: string[],
): Promise<Page> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watchForProblems(page, problems);
  await signIn(page);
  return page;
}
