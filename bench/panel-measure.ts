/**
 * Issue 57's measures of the panel, in a real browser (Chromium through playwright-core).
 * hookprompt runs from the sources as a child process (ROLE=all) on a fresh embedded database,
 * its AI a fake model server, its reply URLs two loopback receivers (one answering 500). The
 * console seed (bench/lib/console-seed.ts: four channels, 50 events, three alert rules) is
 * followed by 150 more events as senders would send them, over those channels and two more:
 * 200 events over six channels. Then, signed in, with `Accept-Encoding: gzip`:
 *
 *   - Brain Logs at 1440×900 and 390×844, each in a fresh context (nothing cached): bytes
 *     transferred (encoded bodies; Chart.js aside), DOM nodes, event rows wholly visible
 *     without scrolling, and whether /vendor/chart.umd.js was requested before the chart was
 *     opened, and after;
 *   - a trial on the shop channel's last 20 events with a judge (the fake model answering at
 *     once; the judge's model priced with PUT /prices): wall time from the POST to the trial
 *     done, its created_at → finished_at, `summary.judge_cost_usd`, both sides' `cost_usd` and
 *     the workspace's `spent_usd` before and after;
 *   - a full-page screenshot of each page issue 57 changed, at both sizes, with its height
 *     and DOM nodes (the channel editor's height is the issue's "editor height").
 *
 * Goals (issue 57): at least 17 rows above the fold at 1440×900, at most 60 KB, Chart.js not
 * fetched before the chart is opened; the run exits 1 when one is missed. Every process and
 * server it started is ended, also on failure.
 *
 *   npx tsx bench/panel-measure.ts [--shots=DIR]
 *
 * The screenshots go to DIR, by default a new temporary folder (its path is printed); the
 * server's output to $TMPDIR/hookprompt-panel-measure.log.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../test/support/eventually.js';
import {
  chatCompletion,
  type FakeReply,
  type RecordedRequest,
} from '../test/support/fake-ai-server.js';
import { CHROMIUM_PATH, hasChromium, launchChromium } from '../test/e2e/browser.js';
import { fakeModelReply, seedConsole, type Seeded } from './lib/console-seed.js';
import { contextOf, signIn, type SignedIn } from './lib/browser-session.js';
import { createRunScope, startConsoleServer } from './lib/console-server.js';

const { values: flags } = parseArgs({ options: { shots: { type: 'string' } } });
const SIZES = [
  { name: '1440×900', file: '1440', viewport: { width: 1440, height: 900 }, isMobile: false },
  { name: '390×844', file: '390', viewport: { width: 390, height: 844 }, isMobile: true },
] as const;
type Size = (typeof SIZES)[number];
const EVENTS = 200;
const TRIAL_EVENTS = 20;
const GOAL_BYTES = 60 * 1024;
const GOAL_ROWS = 17;
const ADMIN = { email: 'measure@example.com', password: 'panel measure password' };
const CHART_JS = '/vendor/chart.umd.js';
const JUDGE_MODEL = 'fake-judge-1';
/** What the trial's candidate adds to the shop channel's template. */
const SHORTER = 'Keep it under twenty words.';
/** USD per million tokens of the judge's model (the live model, gpt-4o-mini, is in the table). */
const JUDGE_PRICE = { input_per_mtok: 2.5, output_per_mtok: 10 };

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const usd = (value: unknown) => (typeof value === 'number' ? `$${value.toFixed(6)}` : 'n/a');
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

if (!hasChromium) {
  console.error(`panel-measure needs Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);
  process.exit(2);
}

const scope = createRunScope();
const { cleanups, cleanUp } = scope;

/** Once set, the fake model answers at once (the trial's measure is hookprompt's own time). */
let instant = false;

let failed: boolean;
try {
  const startedAt = new Date();
  const loadBefore = load();
  const shots = flags.shots ?? (await mkdtemp(join(tmpdir(), 'hookprompt-panel-shots-')));
  await mkdir(shots, { recursive: true });
  const { server, apiKey, okUrl, failingUrl } = await startConsoleServer(scope, {
    name: 'panel-measure',
    admin: ADMIN,
    modelReply,
    failingReplies: 5000,
  });
  const api = apiOf(server.origin, apiKey);
  const seeded = await seedConsole({ origin: server.origin, apiKey, okUrl, failingUrl });
  const extra = await seedMore(api, seeded, okUrl);
  const events = await untilSettled(api);
  if (events.length !== EVENTS)
    throw new Error(`expected ${EVENTS} events, found ${events.length}`);

  const trial = await measureTrial(api, seeded.channels.orders);

  const browser = await launchChromium();
  cleanups.push(() => browser.close());
  const signedIn = await signIn(browser, server.origin, ADMIN, SIZES[0]);
  const logs = [];
  for (const size of SIZES) logs.push(await measureLogs(browser, server.origin, signedIn, size));

  const eventId = String(
    events.find(
      (event) => event.channel_id === seeded.channels.support && event.status === 'replied',
    )?.id ?? events[0]?.id,
  );
  const { data: alerts } = (await api('GET', '/alerts')) as { data: { id: string }[] };
  const pages = [
    ['Brain Logs', '/logs'],
    ['event page', `/logs/${eventId}`],
    ['channel editor', `/channels/${seeded.channels.orders}`],
    ['trial page', `/channels/${seeded.channels.orders}/trials/${trial.id}`],
    ['alerts list', '/alerts'],
    ['alert page', `/alerts/${alerts[0]?.id ?? ''}`],
    ['tools', '/tools'],
    ['providers', '/providers'],
    ['workspace', '/workspace'],
  ] as const;
  const shotRows: string[][] = [];
  for (const size of SIZES) {
    const context = await contextOf(browser, server.origin, signedIn, size);
    try {
      const page = await context.newPage();
      for (const [name, path] of pages) {
        const shot = await screenshot(page, path, join(shots, `${slug(name)}-${size.file}.png`));
        shotRows.push([name, size.name, `${shot.height} px`, String(shot.nodes), shot.file]);
      }
    } finally {
      await context.close();
    }
  }

  const goals = logs.flatMap((measured) => [
    ...(measured.size === SIZES[0]
      ? [
          {
            goal: `≥ ${GOAL_ROWS} rows above the fold at 1440×900`,
            met: measured.rows >= GOAL_ROWS,
          },
        ]
      : []),
    { goal: `≤ ${kb(GOAL_BYTES)} at ${measured.size.name}`, met: measured.bytes <= GOAL_BYTES },
    {
      goal: `Chart.js only once the chart is opened, at ${measured.size.name}`,
      met: !measured.chartBefore && measured.chartAfter,
    },
  ]);
  failed = goals.some((goal) => !goal.met);
  const editor = shotRows.filter((row) => row[0] === 'channel editor');

  console.log(
    `# Panel measures (issue 57) — ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
      `Node ${process.versions.node}, ${cpus().length} cores; embedded PGlite; load average before ` +
      `${loadBefore}, after ${load()}\n${events.length} events over ${Object.keys(seeded.channels).length + extra} ` +
      `channels (${countBy(events)})\n`,
  );
  console.log(
    table(
      ['Brain Logs', ...SIZES.map((size) => size.name)],
      [
        [
          'transferred, compressed (Chart.js aside)',
          ...logs.map((m) => `${kb(m.bytes)} in ${m.files} responses`),
        ],
        ['  of which the HTML document', ...logs.map((m) => kb(m.documentBytes))],
        ['DOM nodes', ...logs.map((m) => String(m.nodes))],
        ['event rows wholly visible', ...logs.map((m) => String(m.rows))],
        [
          'chart.umd.js fetched before the chart is opened',
          ...logs.map((m) => (m.chartBefore ? 'yes' : 'no')),
        ],
        [
          'chart.umd.js fetched once opened, drawn',
          ...logs.map((m) => (m.chartAfter ? `yes, ${kb(m.chartBytes)}` : 'no')),
        ],
        ['channel editor height', ...editor.map((row) => row[2] ?? '')],
      ],
    ),
  );
  console.log(
    `\n${table(
      [`trial with a judge, ${TRIAL_EVENTS} events (fake model at once)`, ''],
      [
        ['wall time, POST to done', `${(trial.wallMs / 1000).toFixed(2)} s`],
        ['created_at → finished_at', `${(trial.storedMs / 1000).toFixed(2)} s`],
        ['results / judged (current, candidate, tie)', `${trial.done} / ${trial.judged}`],
        ['summary.judge_cost_usd', usd(trial.judgeCost)],
        [
          'summary cost_usd, current / candidate',
          `${usd(trial.currentCost)} / ${usd(trial.candidateCost)}`,
        ],
        [
          'workspace spent_usd before → after the trial',
          `${usd(trial.spendBefore)} → ${usd(trial.spendAfter)}`,
        ],
        [
          'judge price',
          `$${JUDGE_PRICE.input_per_mtok} in / $${JUDGE_PRICE.output_per_mtok} out per Mtok (${JUDGE_MODEL})`,
        ],
      ],
    )}`,
  );
  console.log(`\n${table(['page', 'size', 'height', 'DOM nodes', 'screenshot'], shotRows)}`);
  console.log(
    `\n${table(
      ['goal', 'met'],
      goals.map((g) => [g.goal, g.met ? 'yes' : 'NO']),
    )}`,
  );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);

// --- hookprompt, its fakes and its data ---------------------------------------------------------

/** The seed's answers, and the judge's: it prefers the shorter reply, at once when `instant`. */
function modelReply(request: RecordedRequest): FakeReply {
  const prompt = request.prompt ?? '';
  if (prompt.startsWith('Rubric:')) {
    const a = /<reply-A>\n([\s\S]*?)\n<\/reply-A>/.exec(prompt)?.[1] ?? '';
    const b = /<reply-B>\n([\s\S]*?)\n<\/reply-B>/.exec(prompt)?.[1] ?? '';
    const winner = a.length === b.length ? 'tie' : a.length < b.length ? 'A' : 'B';
    return {
      body: {
        ...chatCompletion(JSON.stringify({ winner, reason: 'Says the same in fewer words.' })),
        usage: { prompt_tokens: 180 + prompt.length / 4, completion_tokens: 24, total_tokens: 0 },
      },
    };
  }
  // The trial's candidate asks for a shorter note: its answer is one.
  const order = /^Order (\d+) from ([^(]+?) \(/m.exec(prompt);
  const reply =
    order && prompt.includes(SHORTER)
      ? {
          body: {
            ...chatCompletion(`Thanks, ${order[2]}! Order ${order[1]} is confirmed.`),
            usage: {
              prompt_tokens: 90 + (prompt.length % 400),
              completion_tokens: 14,
              total_tokens: 0,
            },
          },
        }
      : fakeModelReply(request);
  return instant ? { ...reply, delayMs: 0 } : reply;
}

type Api = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

function apiOf(origin: string, apiKey: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? {} : res.json()) as Promise<Record<string, unknown>>;
  };
}

/**
 * 150 more events after the console seed's 50: orders, tickets and monitoring alerts on its
 * channels, and two more channels (deploy notices with a reply URL, sign-ups without one).
 * Resolves to the number of channels added.
 */
async function seedMore(api: Api, seeded: Seeded, okUrl: string): Promise<number> {
  const urlOf = async (id: string) => {
    const channel = await api('GET', `/channels/${id}`);
    return String(channel.webhook_url);
  };
  const deploys = await api('POST', '/channels', {
    name: 'Deploy notices',
    template: '{{deploy.service}} {{deploy.version}} deployed to {{deploy.env}} by {{deploy.by}}.',
    reply_delivery: { url: `${okUrl}/deploys` },
  });
  const signups = await api('POST', '/channels', {
    name: 'Newsletter sign-ups',
    template:
      'New sign-up: {{person.name}} <{{person.email}}> from {{person.source}}. Write a welcome line.',
  });
  const urls = {
    orders: await urlOf(seeded.channels.orders),
    support: await urlOf(seeded.channels.support),
    status: await urlOf(seeded.channels.status),
    deploys: String(deploys.webhook_url),
    signups: String(signups.webhook_url),
  };
  const names = [
    'Ada Lovelace',
    'Grace Hopper',
    'Alan Turing',
    'Edsger Dijkstra',
    'Barbara Liskov',
  ];
  const services = ['checkout-api', 'search', 'payments', 'image-resizer'];
  const sends: [string, unknown][] = [];
  for (let i = 0; i < 50; i++) {
    const name = names[i % names.length] as string;
    sends.push([
      urls.orders,
      {
        order: {
          id: 1100 + i,
          total: (9.5 + i * 7.1).toFixed(2),
          currency: 'EUR',
          items: 1 + (i % 5),
        },
        customer: { name, email: `${name.split(' ')[0]?.toLowerCase()}@example.com` },
        shipping: { city: ['Porto', 'Ghent', 'York', 'Graz'][i % 4] },
      },
    ]);
  }
  for (let i = 0; i < 20; i++)
    sends.push([
      urls.support,
      {
        ticket: {
          id: `T-${2300 + i}`,
          subject: ['Refund for a duplicate invoice', 'Cannot log in on mobile', 'Slow search'][
            i % 3
          ],
          requester: `${names[i % names.length]} <c-${i}@customer.example>`,
          body: 'It started this morning. Please advise. '.repeat(1 + (i % 3)),
        },
      },
    ]);
  for (let i = 0; i < 20; i++)
    sends.push([
      urls.status,
      {
        alert: {
          service: services[i % services.length],
          state: i % 4 === 3 ? 'resolved' : 'firing',
          region: i % 2 ? 'eu-west-1' : 'us-east-1',
          summary: `error rate ${(0.5 + i * 0.3).toFixed(1)} % over 5 min`,
        },
      },
    ]);
  for (let i = 0; i < 30; i++)
    sends.push([
      urls.deploys,
      {
        deploy: {
          service: services[i % services.length],
          version: `v3.${i}.0`,
          env: i % 3 ? 'production' : 'staging',
          by: names[i % names.length],
        },
      },
    ]);
  for (let i = 0; i < 30; i++)
    sends.push([
      urls.signups,
      {
        person: {
          name: names[(i + 1) % names.length],
          email: `reader${i}@mail.example`,
          source: ['blog', 'conference', 'twitter'][i % 3],
        },
      },
    ]);
  // Interleaved as senders would: one of each channel in turn.
  sends.sort((a, b) => (sends.indexOf(a) % 10) - (sends.indexOf(b) % 10));
  for (const [url, body] of sends) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'measure-sender/1.0' },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 202) throw new Error(`${url}: ${res.status}`);
  }
  return 2;
}

/** Every event once none is pending or processing and no delivery is pending. */
async function untilSettled(api: Api): Promise<Record<string, unknown>[]> {
  return eventually(
    async () => {
      const { data } = (await api('GET', '/events?limit=500')) as {
        data: Record<string, unknown>[];
      };
      const busy = data.some(
        (event) =>
          ['pending', 'processing'].includes(String(event.status)) ||
          (event.delivery as { status?: string } | null)?.status === 'pending',
      );
      return busy ? undefined : data;
    },
    { timeoutMs: 180_000, what: 'the events and their deliveries to finish' },
  );
}

/** A trial with a check and a judge on the shop channel's last 20 events, timed to done. */
async function measureTrial(api: Api, channelId: string) {
  instant = true;
  await api('PUT', `/prices/${encodeURIComponent(JUDGE_MODEL)}`, JUDGE_PRICE);
  const spendBefore = (await api('GET', '/workspace')).spent_usd;
  const channel = await api('GET', `/channels/${channelId}`);
  const started = performance.now();
  const created = await api('POST', `/channels/${channelId}/trials`, {
    template: `${String(channel.template)}\n${SHORTER}`,
    events: { last: TRIAL_EVENTS },
    checks: [{ path: 'status', op: 'eq', value: 'replied' }],
    judge: {
      model: JUDGE_MODEL,
      rubric: 'The better reply thanks the customer by name, confirms the order and is short.',
    },
  });
  const trial = await eventually(
    async () => {
      const now = await api('GET', `/trials/${String(created.id)}`);
      return now.status === 'running' ? undefined : now;
    },
    { timeoutMs: 120_000, what: 'the trial to finish' },
  );
  const wallMs = performance.now() - started;
  const summary = (trial.summary ?? {}) as Record<string, unknown>;
  const judge = (summary.judge ?? {}) as Record<string, number>;
  instant = false;
  return {
    id: String(trial.id),
    wallMs,
    storedMs: Date.parse(String(trial.finished_at)) - Date.parse(String(trial.created_at)),
    done: `${String(trial.done)} of ${String(trial.total)} (${String(trial.status)})`,
    judged: `${judge.current ?? 0}, ${judge.candidate ?? 0}, ${judge.tie ?? 0}`,
    judgeCost: summary.judge_cost_usd,
    currentCost: (summary.current as Record<string, unknown> | undefined)?.cost_usd,
    candidateCost: (summary.candidate as Record<string, unknown> | undefined)?.cost_usd,
    spendBefore,
    spendAfter: (await api('GET', '/workspace')).spent_usd,
  };
}

/** `replied 142, failed 9…`: how many events have each status. */
function countBy(objects: Record<string, unknown>[]): string {
  const counts = new Map<string, number>();
  for (const { status } of objects)
    if (typeof status === 'string') counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${status} ${n}`).join(', ');
}

// --- the browser -------------------------------------------------------------------------------

/** Brain Logs loaded cold at one size; then its chart opened. */
async function measureLogs(browser: Browser, origin: string, signedIn: SignedIn, size: Size) {
  const context = await contextOf(browser, origin, signedIn, size);
  try {
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    const sizes: Promise<[string, number]>[] = [];
    page.on('requestfinished', (request) =>
      sizes.push(
        request.sizes().then(
          (s) => [new URL(request.url()).pathname, Math.max(0, s.responseBodySize)],
          () => [new URL(request.url()).pathname, 0],
        ),
      ),
    );
    await page.goto('/logs', { waitUntil: 'load' });
    await page.waitForLoadState('networkidle');
    // Browser code as text: this file is compiled without the DOM's types.
    const seen = (await page.evaluate(`({
      nodes: document.getElementsByTagName('*').length,
      rows: [...document.querySelectorAll('#event-list .event-row')].filter((row) => {
        const box = row.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
      }).length,
    })`)) as { nodes: number; rows: number };
    const loaded = await Promise.all(sizes);
    const chartBefore = requested.includes(CHART_JS);
    const counted = loaded.filter(([path]) => path !== CHART_JS);

    await page.click('#volume > summary');
    await eventually(
      async () =>
        (await page.evaluate('Boolean(document.getElementById("volume-chart").chart)')) === true,
      { timeoutMs: 20_000, what: 'the chart to be drawn' },
    );
    const chart = (await Promise.all(sizes)).find(([path]) => path === CHART_JS);
    return {
      size,
      bytes: counted.reduce((sum, [, bytes]) => sum + bytes, 0),
      files: counted.length,
      documentBytes: counted.find(([path]) => path === '/logs')?.[1] ?? NaN,
      nodes: seen.nodes,
      rows: seen.rows,
      chartBefore,
      chartAfter: requested.includes(CHART_JS),
      chartBytes: chart?.[1] ?? 0,
    };
  } finally {
    await context.close();
  }
}

/** A full-page screenshot of one page; its height and DOM nodes. */
async function screenshot(page: Page, path: string, file: string) {
  await page.goto(path, { waitUntil: 'load' });
  const seen = (await page.evaluate(`({
    height: document.documentElement.scrollHeight,
    nodes: document.getElementsByTagName('*').length,
  })`)) as { height: number; nodes: number };
  await page.screenshot({ path: file, fullPage: true });
  return { ...seen, file };
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

function table(header: string[], body: string[][]): string {
  return [header, header.map(() => '---'), ...body]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n');
}
