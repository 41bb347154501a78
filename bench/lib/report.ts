import type { ClosedLoopRow } from './closed-loop.js';
import type { EndToEndResult } from './end-to-end.js';
import type { FairnessResult } from './fairness.js';
import { totalOf, type LatencySummary, type StatusCounts } from './latency.js';
import type { OpenLoopResult } from './open-loop.js';
import type { ProfileSummary } from './cpu-profile.js';
import type { CpuUse } from './process-cpu.js';
import type { ScaleEventsResult } from './scale-events.js';

export interface OpenLoopRow extends OpenLoopResult {
  key: string;
  target: string;
  round?: number;
  /**
   * The server's full garbage collections (V8 mark-compacts) during the run, from its
   * `/metrics`; each pauses it for milliseconds, so a few of them show in the p99.
   */
  fullGcs?: number;
  /**
   * The server's batch writes (the store statement with its commit, which every 200 waits for)
   * that took over 50 ms during the run, and the bound of the histogram bucket that holds the
   * slowest (in seconds): a slow disk flush shows here.
   */
  slowWrites?: { over50ms: number; slowestWithinS: number };
  /**
   * CPU per answered request of the server and of its database's backends, and the cores the
   * whole machine kept busy: at a fixed rate each request is a batch of its own, so a request
   * costs several times what it does under load, and a machine near its cores' limit answers
   * late whatever the server does. (The requests come from a process of their own, which only
   * the machine's cores include.)
   */
  cpu?: Pick<CpuUse, 'serverMsPerRequest' | 'postgresMsPerRequest' | 'machineCores'>;
}

export interface Ratio {
  name: string;
  value: number;
  /** The value to reach, when there is one. */
  target?: number;
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: {
    cpus: number;
    node: string;
    postgres: string;
    loadBefore: number[];
    loadAfter: number[];
  };
  settings: Record<string, unknown>;
  closedLoop: ClosedLoopRow[];
  ratios: Ratio[];
  openLoop: OpenLoopRow[];
  /** One run per WORKER_CONCURRENCY. */
  endToEnd: EndToEndResult[] | { skipped: string } | undefined;
  fairness?: FairnessResult;
  scaleEvents?: ScaleEventsResult | { skipped: string };
  profiles: (ProfileSummary & { target: string; file: string })[];
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '–');
const perSecond = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–';
const latencyCells = (l: LatencySummary) => [ms(l.p50), ms(l.p99), ms(l.max)];
const percent = (share: number | undefined) =>
  share === undefined ? '–' : `${Math.round(share * 100)}%`;
const cpuMs = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(3));
const cores = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(2));
const cpuCells = (cpu: CpuUse) => [
  cpuMs(cpu.serverMsPerRequest),
  cpuMs(cpu.postgresMsPerRequest),
  percent(cpu.serverCoreShare),
  percent(cpu.serverWaitedForCore),
  cores(cpu.otherCores),
];

export function formatStatusCounts(counts: StatusCounts): string {
  const total = totalOf(counts);
  if (total === 0) return '0';
  return `${total} (${Object.entries(counts)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ')})`;
}

export function closedLoopLine(row: ClosedLoopRow): string {
  const [p50, p99, max] = latencyCells(row.latency);
  return (
    `${row.target.padEnd(24)} c=${String(row.connections).padEnd(4)} ${perSecond(row.acceptedPerSecond).padStart(7)}/s  ` +
    `p50 ${p50} ms  p99 ${p99} ms  max ${max} ms  non-200: ${formatStatusCounts(row.non200)}  ` +
    `CPU ms/req server ${cpuMs(row.cpu.serverMsPerRequest)} postgres ${cpuMs(row.cpu.postgresMsPerRequest)}, ` +
    `server CPU ${percent(row.cpu.serverCoreShare)} of a core, its JS thread waited for a core ${percent(row.cpu.serverWaitedForCore)} of the time`
  );
}

export function openLoopLine(row: OpenLoopRow): string {
  const [p50, p99, max] = latencyCells(row.latency);
  return (
    `${row.target.padEnd(24)} ${row.rate}/s x ${row.seconds} s  p50 ${p50} ms  p99 ${p99} ms  max ${max} ms  ` +
    `non-200: ${formatStatusCounts(row.non200)}` +
    (row.fullGcs === undefined ? '' : `  full GCs of the server: ${row.fullGcs}`) +
    (row.slowWrites === undefined
      ? ''
      : `  its batch writes over 50 ms: ${slowWritesCell(row.slowWrites)}`) +
    (row.cpu === undefined
      ? ''
      : `  CPU ms/req server ${cpuMs(row.cpu.serverMsPerRequest)} postgres ${cpuMs(row.cpu.postgresMsPerRequest)}, machine ${cores(row.cpu.machineCores)} cores busy`)
  );
}

/** `0`, or e.g. `1 (≤ 250 ms)`: how many batch writes took over 50 ms, and the slowest's bound. */
function slowWritesCell({
  over50ms,
  slowestWithinS,
}: NonNullable<OpenLoopRow['slowWrites']>): string {
  if (over50ms === 0) return '0';
  const bound = slowestWithinS === Infinity ? 'over 5 s' : `≤ ${slowestWithinS * 1000} ms`;
  return `${over50ms} (${bound})`;
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The whole result as markdown, ready to paste into the docs. */
export function markdownReport(report: BenchReport): string {
  const parts: string[] = [];
  const s = report.settings;
  parts.push(
    `Ingest benchmark, ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC: ${report.machine.cpus} cores, ` +
      `Node ${report.machine.node}, ${report.machine.postgres}; hookprompt run as ${String(s.hookpromptEntry)}, ` +
      `LOG_LEVEL=warn unless noted, 1 KB JSON body, ${String(s.seconds)} s per run after a ${String(s.warmupSeconds)} s warm-up. ` +
      `Load average (1/5/15 min) before ${report.machine.loadBefore.map((n) => n.toFixed(2)).join(' ')}, ` +
      `after ${report.machine.loadAfter.map((n) => n.toFixed(2)).join(' ')}.`,
  );

  if (report.closedLoop.length) {
    parts.push(
      '**Closed loop** (each connection sends its next request when the previous one is answered):\n\n' +
        table(
          [
            'server',
            'connections',
            'accepted/s',
            'p50 ms',
            'p99 ms',
            'max ms',
            'non-200',
            'server CPU ms/req',
            'PG CPU ms/req',
            'server CPU, share of a core',
            'JS thread waited for a core',
            'rest of the machine, cores',
          ],
          report.closedLoop.map((row) => [
            row.round && row.round > 1 ? `${row.target}, run ${row.round}` : row.target,
            String(row.connections),
            perSecond(row.acceptedPerSecond),
            ...latencyCells(row.latency),
            formatStatusCounts(row.non200),
            ...cpuCells(row.cpu),
          ]),
        ),
    );
  }

  if (report.ratios.length) {
    parts.push(
      table(
        ['ratio at 128 connections (means of the runs)', 'value'],
        report.ratios.map((r) => [r.name, r.value.toFixed(2)]),
      ),
    );
  }

  if (report.openLoop.length) {
    parts.push(
      '**Fixed rate** (evenly spaced; each request timed from when it was due):\n\n' +
        table(
          [
            'server',
            'rate',
            'p50 ms',
            'p99 ms',
            'max ms',
            'non-200',
            'full GCs',
            'writes > 50 ms',
            'server CPU ms/req',
            'PG CPU ms/req',
            'machine cores busy',
          ],
          report.openLoop.map((row) => [
            row.target,
            `${row.rate}/s for ${row.seconds} s`,
            ...latencyCells(row.latency),
            formatStatusCounts(row.non200),
            row.fullGcs === undefined ? '–' : String(row.fullGcs),
            row.slowWrites === undefined ? '–' : slowWritesCell(row.slowWrites),
            cpuMs(row.cpu?.serverMsPerRequest),
            cpuMs(row.cpu?.postgresMsPerRequest),
            cores(row.cpu?.machineCores),
          ]),
        ),
    );
  }

  const e2e = report.endToEnd;
  if (e2e && 'skipped' in e2e) {
    parts.push(`**End to end**: not run (${e2e.skipped}).`);
  } else if (e2e?.length) {
    parts.push(
      `**End to end** (worker on, a fake ${e2e[0]?.aiProtocol ?? 'openai'} AI answering in ` +
        `${e2e[0]?.aiDelayMs} ms; events posted evenly ` +
        'at the rate shown, faster than the worker answers, so a backlog forms):\n\n' +
        table(
          [
            'WORKER_CONCURRENCY',
            'events at rate',
            'accepted',
            'non-200',
            'final statuses',
            'AI calls',
            'replies/s (first to last reply)',
            '200→replied p50 / p99 / max ms',
            'cores used: server / PostgreSQL / sender + fake AI / machine',
          ],
          e2e.map((run) => [
            String(run.workerConcurrency),
            `${run.events} at ${run.rate}/s`,
            String(run.accepted),
            formatStatusCounts(run.non200),
            Object.entries(run.statuses)
              .map(([status, n]) => `${status} ${n}`)
              .join(', ') + (run.stalled ? ' (stalled)' : ''),
            String(run.aiCalls),
            perSecond(run.completedPerSecond),
            latencyCells(run.answerToReplied).join(' / '),
            [run.serverCores, run.postgresCores, run.benchCores, run.machineCores]
              .map(cores)
              .join(' / '),
          ]),
        ),
    );
  }

  const scale = report.scaleEvents;
  if (scale && 'skipped' in scale) {
    parts.push(`**Large events table**: not run (${scale.skipped}).`);
  } else if (scale) {
    parts.push(
      `**Large events table** (${scale.events.toLocaleString('en')} events vs none, 128 connections, alternating):\n\n` +
        table(
          [
            'database',
            'accepted/s',
            'p50 ms',
            'p99 ms',
            'max ms',
            'non-200',
            'server CPU ms/req',
            'PG CPU ms/req',
          ],
          [...scale.empty, ...scale.full]
            .sort((x, y) => (x.round ?? 0) - (y.round ?? 0))
            .map((row) => [
              `${row.target}, run ${row.round ?? 1}`,
              perSecond(row.acceptedPerSecond),
              ...latencyCells(row.latency),
              formatStatusCounts(row.non200),
              cpuMs(row.cpu.serverMsPerRequest),
              cpuMs(row.cpu.postgresMsPerRequest),
            ]),
        ),
    );
  }
  return parts.join('\n\n');
}
