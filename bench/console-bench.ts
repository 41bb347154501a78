/**
 * Brain Logs as an operator sees it, in a real browser (Chromium through playwright-core).
 * hookprompt runs from the sources as a child process (ROLE=all) on a fresh embedded database,
 * its AI a fake model server, its reply URLs two loopback receivers (one answering 500); an
 * admin and the default workspace come from ADMIN_EMAIL / ADMIN_PASSWORD / ADMIN_API_KEY, and
 * 50 events over four channels are sent as real senders would (bench/lib/console-seed.ts).
 * Then, signed in, with `Accept-Encoding: gzip`:
 *
 *   - /logs, five loads (--loads) each in a fresh browser context (nothing cached), after one
 *     not counted (the server's first render compiles its views): bytes transferred (the
 *     responses' encoded bodies: the document, CSS, scripts, icon; Chart.js aside), the HTML
 *     uncompressed, DOM nodes, server time (request to first byte of the document), first
 *     paint and first contentful paint; medians of the five;
 *   - event rows wholly visible without scrolling at 1440×900 and at 390×844;
 *   - the detail beside the list (`/logs/:id/panel`, fetched on a click on a row), five rows:
 *     its bytes and the time from the click to the detail shown, medians;
 *   - screenshots at both sizes: the list, the list with the detail open (on a phone the click
 *     opens the event page), an event page, a channel editor after a refused save, the failure
 *     groups, the Workspace and the Alerts pages.
 *
 * Goals: at most 60 KB transferred, at least 12 rows above the fold at 1440×900; the run
 * exits 1 when one is missed. Every process and server it started is ended, also on failure.
 *
 *   npm run bench:console [-- --shots=DIR] [--loads=5]
 *
 * The screenshots go to DIR, by default a new temporary folder (its path is printed); the
 * server's output to $TMPDIR/hookprompt-console-bench.log.
 *
 * With DATABASE_URL set (a PostgreSQL server), the run uses a scratch database made on that
 * server and dropped at the end, instead of the embedded one.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, Page, Request } from 'playwright-core';
import { CHROMIUM_PATH, hasChromium, launchChromium } from '../test/e2e/browser.js';
import { fakeModelReply, seedConsole, SEEDED_EVENTS, type Seeded } from './lib/console-seed.js';
import { contextOf, signIn, type SignedIn } from './lib/browser-session.js';
import { createRunScope, startConsoleServer } from './lib/console-server.js';

const { values: flags } = parseArgs({
  options: {
    shots: { type: 'string' },
    loads: { type: 'string', default: '5' },
  },
});
const LOADS = Math.max(1, Math.floor(Number(flags.loads)) || 1);
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const SIZES = [
  { name: '1440', viewport: DESKTOP, isMobile: false },
  { name: '390', viewport: PHONE, isMobile: true },
] as const;
const GOAL_BYTES = 60 * 1024;
const GOAL_ROWS_DESKTOP = 12;
const ADMIN = { email: 'bench@example.com', password: 'console bench password' };
const CHART_JS = '/vendor/chart.umd.js';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

if (!hasChromium) {
  console.error(`bench:console needs Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);
  process.exit(2);
}

const scope = createRunScope();
const { cleanups, cleanUp } = scope;

const startedAt = new Date();
const loadBefore = load();
let failed: boolean;
try {
  const shots = flags.shots ?? (await mkdtemp(join(tmpdir(), 'hookprompt-console-shots-')));
  await mkdir(shots, { recursive: true });
  const phases: string[] = [];
  let phaseStart = performance.now();
  const phase = (name: string) => {
    phases.push(`${name} ${((performance.now() - phaseStart) / 1000).toFixed(1)} s`);
    phaseStart = performance.now();
  };
  const { server, apiKey, okUrl, failingUrl, databaseLabel } = await startConsoleServer(scope, {
    name: 'console-bench',
    admin: ADMIN,
    modelReply: fakeModelReply,
    failingReplies: 1000,
    postgresUrl: process.env.DATABASE_URL,
  });
  phase('start');
  const seeded = await seedConsole({ origin: server.origin, apiKey, okUrl, failingUrl });
  phase('seed');
  const browser = await launchChromium();
  cleanups.push(() => browser.close());
  const signedIn = await signIn(browser, server.origin, ADMIN, SIZES[0]);

  const list = await measureList(browser, server.origin, signedIn);
  const rows = {
    desktop: await rowsAboveTheFold(browser, server.origin, signedIn, SIZES[0]),
    phone: await rowsAboveTheFold(browser, server.origin, signedIn, SIZES[1]),
  };
  const detail = await measureDetail(browser, server.origin, signedIn);
  phase('measure');
  const files = await screenshots(browser, server.origin, signedIn, seeded, shots);
  phase('screenshots');

  const goals = [
    {
      measure: 'transferred, compressed (Chart.js aside)',
      value: kb(list.bytes),
      goal: `≤ ${kb(GOAL_BYTES)}`,
      met: list.bytes <= GOAL_BYTES,
    },
    {
      measure: 'events wholly visible at 1440×900',
      value: String(rows.desktop),
      goal: `≥ ${GOAL_ROWS_DESKTOP}`,
      met: rows.desktop >= GOAL_ROWS_DESKTOP,
    },
  ];
  failed = goals.some((goal) => !goal.met);
  const table = (header: string[], body: string[][]) =>
    [header, header.map(() => '---'), ...body]
      .map((cells) => `| ${cells.join(' | ')} |`)
      .join('\n');
  console.log(
    `# Brain Logs console benchmark — ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
      `Node ${process.versions.node}, ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ` +
      `${databaseLabel}; load average before ${loadBefore}, after ${load()}\n` +
      `${SEEDED_EVENTS} events over 4 channels (${countBy(seeded.events)}); ` +
      `reply deliveries ${countBy(seeded.events.map((event) => (event.delivery ?? {}) as Record<string, unknown>))}; ` +
      `/logs loaded ${LOADS}× in fresh contexts after one load not counted, document sent ${list.encoding}\n`,
  );
  console.log(
    table(
      ['measure', `/logs (median of ${LOADS} where timed)`],
      [
        [
          'transferred, compressed (Chart.js aside)',
          `${kb(list.bytes)} in ${list.files.filter((file) => file.path !== CHART_JS).length} responses`,
        ],
        ['  of which the HTML document', kb(list.documentBytes)],
        [
          'Chart.js, compressed (not counted)',
          list.chartBytes ? kb(list.chartBytes) : 'not loaded',
        ],
        ['the HTML uncompressed', kb(list.htmlBytes)],
        ['DOM nodes', String(list.domNodes)],
        ['server time (request to first byte of the document)', `${list.serverMs.toFixed(0)} ms`],
        ['first paint', `${list.firstPaintMs.toFixed(0)} ms`],
        ['first contentful paint', `${list.firstContentfulPaintMs.toFixed(0)} ms`],
        ['events wholly visible at 1440×900', String(rows.desktop)],
        ['events wholly visible at 390×844', String(rows.phone)],
        [
          'detail (/logs/:id/panel), compressed',
          `${kb(detail.bytes)} (largest of ${detail.opened}: ${kb(detail.maxBytes)})`,
        ],
        [
          'detail: click to shown',
          `${detail.shownMs.toFixed(0)} ms (its request ${detail.fetchMs.toFixed(0)} ms)`,
        ],
      ],
    ),
  );
  console.log(
    `\nResponses of the first load: ${list.files.map((f) => `${f.path} ${f.bytes} B${f.encoding ? ` ${f.encoding}` : ''}`).join(', ')}`,
  );
  console.log(
    `\n${table(
      ['goal', 'measured', 'target', 'met'],
      goals.map((g) => [g.measure, g.value, g.goal, g.met ? 'yes' : 'NO']),
    )}`,
  );
  console.log(`\nTook ${phases.join(', ')}.`);
  console.log(`\nScreenshots in ${shots}:\n${files.map((file) => `  ${file}`).join('\n')}`);
  if (list.problems.length)
    console.log(`\nScript errors in the pages: ${list.problems.join('; ')}`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);

// --- hookprompt and its fakes ------------------------------------------------------------------

/**
 * The fake model, the two reply URLs and hookprompt on a fresh database (each ended by the
 * run's clean-up); the API key of its default workspace.
 */

/** `replied 42, failed 4…`: how many of the objects have each `status`. */
function countBy(objects: Record<string, unknown>[]): string {
  const counts = new Map<string, number>();
  for (const { status } of objects)
    if (typeof status === 'string') counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${status} ${n}`).join(', ');
}

// --- the browser -------------------------------------------------------------------------------

type Size = (typeof SIZES)[number];

interface ResponseSize {
  path: string;
  bytes: number;
  encoding: string;
}

interface ListMeasures {
  bytes: number;
  documentBytes: number;
  chartBytes: number;
  htmlBytes: number;
  domNodes: number;
  serverMs: number;
  firstPaintMs: number;
  firstContentfulPaintMs: number;
  encoding: string;
  files: ResponseSize[];
  problems: string[];
}

/**
 * Every response of one page load with its body's size as sent (encoded), once the page is
 * loaded and the network idle.
 */
function recordResponses(page: Page): () => Promise<ResponseSize[]> {
  const sizes: Promise<ResponseSize | undefined>[] = [];
  const record = (request: Request) => {
    sizes.push(
      (async () => {
        const response = await request.response();
        const headers = response ? await response.allHeaders() : {};
        return {
          path: new URL(request.url()).pathname,
          // Negative for a response the browser took from its memory cache: nothing was sent.
          bytes: Math.max(0, (await request.sizes()).responseBodySize),
          encoding: headers['content-encoding'] ?? '',
        };
      })().catch(() => undefined),
    );
  };
  page.on('requestfinished', record);
  return async () => {
    page.off('requestfinished', record);
    const all = await Promise.all(sizes);
    return all.filter((size): size is ResponseSize => Boolean(size?.bytes));
  };
}

async function measureList(
  browser: Browser,
  origin: string,
  signedIn: SignedIn,
): Promise<ListMeasures> {
  const runs: (Omit<ListMeasures, 'serverMs' | 'firstPaintMs' | 'firstContentfulPaintMs'> & {
    serverMs: number;
    firstPaintMs: number;
    firstContentfulPaintMs: number;
  })[] = [];
  // One load first, not counted: the server's first render of the page compiles its views.
  for (let i = -1; i < LOADS; i++) {
    const context = await contextOf(browser, origin, signedIn, SIZES[0]);
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      const responses = recordResponses(page);
      await page.goto('/logs', { waitUntil: 'load' });
      await page.waitForLoadState('networkidle');
      // Browser code as text: this file is compiled without the DOM's types.
      const timing = (await page.evaluate(`(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const paint = (name) => performance.getEntriesByType('paint').find((p) => p.name === name);
        return {
          domNodes: document.getElementsByTagName('*').length,
          rows: document.querySelectorAll('#event-list .event-row').length,
          serverMs: nav.responseStart - nav.requestStart,
          htmlBytes: nav.decodedBodySize,
          firstPaintMs: paint('first-paint') ? paint('first-paint').startTime : NaN,
          firstContentfulPaintMs: paint('first-contentful-paint') ? paint('first-contentful-paint').startTime : NaN,
        };
      })()`)) as Record<string, number>;
      if (timing.rows !== SEEDED_EVENTS)
        throw new Error(`/logs listed ${timing.rows} events, not ${SEEDED_EVENTS}`);
      const files = await responses();
      if (i < 0) continue;
      const document = files.find((file) => file.path === '/logs');
      const counted = files.filter((file) => file.path !== CHART_JS);
      runs.push({
        bytes: counted.reduce((sum, file) => sum + file.bytes, 0),
        documentBytes: document?.bytes ?? NaN,
        chartBytes: files.find((file) => file.path === CHART_JS)?.bytes ?? 0,
        htmlBytes: timing.htmlBytes as number,
        domNodes: timing.domNodes as number,
        serverMs: timing.serverMs as number,
        firstPaintMs: timing.firstPaintMs as number,
        firstContentfulPaintMs: timing.firstContentfulPaintMs as number,
        encoding: document?.encoding || 'uncompressed',
        files,
        problems,
      });
    } finally {
      await context.close();
    }
  }
  const first = runs[0] as (typeof runs)[number];
  return {
    ...first,
    bytes: median(runs.map((run) => run.bytes)),
    documentBytes: median(runs.map((run) => run.documentBytes)),
    serverMs: median(runs.map((run) => run.serverMs)),
    firstPaintMs: median(runs.map((run) => run.firstPaintMs)),
    firstContentfulPaintMs: median(runs.map((run) => run.firstContentfulPaintMs)),
    problems: [...new Set(runs.flatMap((run) => run.problems))],
  };
}

/** Event rows whose whole box is on the screen without scrolling. */
function visibleRows(page: Page): Promise<number> {
  return page.evaluate(`[...document.querySelectorAll('#event-list .event-row')].filter((row) => {
    const box = row.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
  }).length`) as Promise<number>;
}

async function rowsAboveTheFold(
  browser: Browser,
  origin: string,
  signedIn: SignedIn,
  size: Size,
): Promise<number> {
  const context = await contextOf(browser, origin, signedIn, size);
  try {
    const page = await context.newPage();
    await page.goto('/logs', { waitUntil: 'load' });
    return await visibleRows(page);
  } finally {
    await context.close();
  }
}

/** Opens the detail beside the list for the first five rows, one after another, by a click. */
async function measureDetail(browser: Browser, origin: string, signedIn: SignedIn) {
  const context = await contextOf(browser, origin, signedIn, SIZES[0]);
  try {
    const page = await context.newPage();
    await page.goto('/logs', { waitUntil: 'load' });
    const ids = (await page.$$eval('#event-list .event-row', (rows) =>
      rows.slice(0, 5).map((row) => row.getAttribute('data-event-id')),
    )) as string[];
    const bytes: number[] = [];
    const shown: number[] = [];
    const fetched: number[] = [];
    for (const id of ids) {
      const answered = page.waitForEvent('requestfinished', (request) =>
        request.url().endsWith(`/logs/${id}/panel`),
      );
      const started = performance.now();
      await page.click(`#event-${id} .row-link`);
      await page.locator(`#event-detail [data-event-id="${id}"]`).waitFor();
      shown.push(performance.now() - started);
      const request = await answered;
      bytes.push((await request.sizes()).responseBodySize);
      const timing = request.timing();
      fetched.push(timing.responseEnd - Math.max(0, timing.requestStart));
    }
    return {
      opened: ids.length,
      bytes: median(bytes),
      maxBytes: Math.max(...bytes),
      shownMs: median(shown),
      fetchMs: median(fetched),
    };
  } finally {
    await context.close();
  }
}

/** The panel's pages at both sizes, as PNG files in `dir`; their paths. */
async function screenshots(
  browser: Browser,
  origin: string,
  signedIn: SignedIn,
  seeded: Seeded,
  dir: string,
): Promise<string[]> {
  const files: string[] = [];
  const ticket = seeded.events.find(
    (event) => event.channel_id === seeded.channels.support && event.status === 'replied',
  );
  for (const size of SIZES) {
    const context = await contextOf(browser, origin, signedIn, size);
    const page = await context.newPage();
    const shot = async (name: string, fullPage = false) => {
      const path = join(dir, `${name}-${size.name}.png`);
      await page.screenshot({ path, fullPage });
      files.push(path);
    };
    try {
      await page.goto('/logs', { waitUntil: 'load' });
      await shot('brain-logs');

      const failures = page.locator('#failures');
      const failuresPath = join(dir, `failure-groups-${size.name}.png`);
      await failures.screenshot({ path: failuresPath });
      files.push(failuresPath);

      // Wide, the click opens the detail beside the list; narrow, it follows the link to the
      // event's page.
      const id = String(ticket?.id ?? seeded.events[1]?.id);
      await page.click(`#event-${id} .row-link`);
      if (size.isMobile) await page.waitForURL(`**/logs/${id}`);
      else await page.locator(`#event-detail [data-event-id="${id}"]`).waitFor();
      await shot('brain-logs-detail');

      await page.goto(`/logs/${id}`, { waitUntil: 'load' });
      await shot('event-page', true);

      await page.goto(`/channels/${seeded.channels.support}`, { waitUntil: 'load' });
      await page.fill('#ai_temperature', 'hot');
      await page.fill('#ai_max_tokens', '-5');
      await page.locator('#editor button.primary:has-text("Save")').last().click();
      await page.locator('#error-summary').waitFor();
      await page.evaluate('window.scrollTo(0, 0)');
      await shot('channel-editor-errors');

      await page.goto('/workspace', { waitUntil: 'load' });
      await shot('workspace', true);

      await page.goto('/alerts', { waitUntil: 'load' });
      await shot('alerts', true);
    } finally {
      await context.close();
    }
  }
  return files;
}
