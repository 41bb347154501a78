import type { ClosedLoopResult } from './closed-loop.js';
import type { EndToEndResult } from './end-to-end.js';
import type { FairnessResult } from './fairness.js';
import { totalOf, type LatencySummary, type StatusCounts } from './latency.js';
import type { OpenLoopResult } from './open-loop.js';
import type { ProfileSummary } from './cpu-profile.js';
import type { CpuUse } from './process-cpu.js';

export interface ClosedLoopRow extends ClosedLoopResult {
  /** The target's short name: ours, ours-info, a, a+q, b, c. */
  key: string;
  target: string;
  cpu: CpuUse;
}

export interface OpenLoopRow extends OpenLoopResult {
  key: string;
  target: string;
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
  endToEnd: EndToEndResult | { skipped: string } | undefined;
  fairness?: FairnessResult;
  profile: (ProfileSummary & { file: string }) | undefined;
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '–');
const perSecond = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–';
const latencyCells = (l: LatencySummary) => [ms(l.p50), ms(l.p99), ms(l.max)];
const percent = (share: number | undefined) =>
  share === undefined ? '–' : `${Math.round(share * 100)}%`;
const cpuMs = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(3));
const cpuCells = (cpu: CpuUse) => [
  cpuMs(cpu.serverMsPerRequest),
  cpuMs(cpu.postgresMsPerRequest),
  percent(cpu.serverCoreShare),
  percent(cpu.serverWaitedForCore),
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
    `non-200: ${formatStatusCounts(row.non200)}`
  );
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
        ],
        report.closedLoop.map((row) => [
          row.target,
          String(row.connections),
          perSecond(row.acceptedPerSecond),
          ...latencyCells(row.latency),
          formatStatusCounts(row.non200),
          ...cpuCells(row.cpu),
        ]),
      ),
  );

  if (report.ratios.length) {
    parts.push(
      table(
        ['ratio at 128 connections', 'value', 'target'],
        report.ratios.map((r) => [
          r.name,
          r.value.toFixed(2),
          r.target === undefined
            ? ''
            : `≥ ${r.target} ${r.value >= r.target ? '(met)' : '(missed)'}`,
        ]),
      ),
    );
  }

  if (report.openLoop.length) {
    parts.push(
      '**Fixed rate** (evenly spaced; each request timed from when it was due):\n\n' +
        table(
          ['server', 'rate', 'p50 ms', 'p99 ms', 'max ms', 'non-200'],
          report.openLoop.map((row) => [
            row.target,
            `${row.rate}/s for ${row.seconds} s`,
            ...latencyCells(row.latency),
            formatStatusCounts(row.non200),
          ]),
        ),
    );
  }

  const e2e = report.endToEnd;
  if (e2e && 'skipped' in e2e) {
    parts.push(`**End to end**: not run (${e2e.skipped}).`);
  } else if (e2e) {
    parts.push(
      `**End to end** (worker on, AI answering in ${e2e.aiDelayMs} ms, WORKER_CONCURRENCY=${e2e.workerConcurrency}; ` +
        `${e2e.events} events at ${e2e.rate}/s):\n\n` +
        table(
          [
            'accepted',
            'non-200',
            'final statuses',
            'AI calls',
            'replied/s',
            '200→replied p50 / p99 / max ms',
            'received_at→completed_at p50 / p99 ms',
          ],
          [
            [
              String(e2e.accepted),
              formatStatusCounts(e2e.non200),
              Object.entries(e2e.statuses)
                .map(([status, n]) => `${status} ${n}`)
                .join(', ') + (e2e.stalled ? ' (stalled)' : ''),
              String(e2e.aiCalls),
              perSecond(e2e.repliedPerSecond),
              latencyCells(e2e.answerToReplied).join(' / '),
              `${ms(e2e.receivedToCompleted.p50)} / ${ms(e2e.receivedToCompleted.p99)}`,
            ],
          ],
        ),
    );
  }
  return parts.join('\n\n');
}
