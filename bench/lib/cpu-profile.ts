import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) that self time needs. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionTime {
  name: string;
  /** The package the function belongs to ("ours" for the project's own code). */
  where: string;
  group: string;
  selfMs: number;
  /** Share of the time the process was busy (not idle). */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  top: FunctionTime[];
  groups: { group: string; selfMs: number; percent: number }[];
  packages: { where: string; group: string; selfMs: number; percent: number }[];
}

/** Packages by the part of the stack they belong to; every other package is "other packages". */
const PACKAGE_GROUPS: Record<string, string> = {
  express:
    'express router body-parser raw-body finalhandler send serve-static qs type-is on-finished ' +
    'depd accepts mime-types mime-db negotiator iconv-lite safe-buffer setprototypeof http-errors ' +
    'statuses path-to-regexp parseurl encodeurl escape-html merge-descriptors cookie vary fresh ' +
    'range-parser proxy-addr forwarded ipaddr.js etag media-typer content-type content-disposition ' +
    'ee-first unpipe bytes debug ms express-rate-limit side-channel object-inspect get-intrinsic',
  pg:
    'pg pg-pool pg-protocol pg-types pg-connection-string pg-int8 pgpass postgres-array ' +
    'postgres-bytea postgres-date postgres-interval split2',
  pino:
    'pino pino-http pino-std-serializers pino-abstract-transport sonic-boom thread-stream ' +
    'fast-redact @pinojs/redact quick-format-unescaped atomic-sleep on-exit-leak-free ' +
    'safe-stable-stringify real-require process-warning',
};
const GROUP_OF_PACKAGE = new Map(
  Object.entries(PACKAGE_GROUPS).flatMap(([group, names]) =>
    names.split(' ').map((name) => [name, group] as const),
  ),
);

/** Where a function comes from: our code, a package, Node's own JavaScript, or V8 itself. */
function locate(url: string, functionName: string): { where: string; group: string } {
  if (functionName === '(garbage collector)') return { where: 'GC', group: 'GC' };
  if (functionName === '(idle)') return { where: 'idle', group: 'idle' };
  if (url.startsWith('node:')) return { where: 'node', group: 'node internals' };
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? '?');
    return { where: name, group: GROUP_OF_PACKAGE.get(name) ?? 'other packages' };
  }
  if (url.startsWith('file://')) return { where: 'ours', group: 'ours' };
  // No URL: V8 builtins and native code ((program), JSON.parse, RegExp, crypto, the socket writes).
  return { where: 'native', group: 'node internals' };
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** Self time per function (merged over all its call paths), per package and per group. */
export function summariseProfile(profile: CpuProfile, topCount = 15): ProfileSummary {
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  // A sample's time is the gap until the next sample: V8's own convention for self time.
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const gap = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + gap);
  }

  const byFunction = new Map<
    string,
    { name: string; where: string; group: string; selfMs: number }
  >();
  for (const [id, selfMs] of selfByNode) {
    const { functionName, url, lineNumber } = (nodeById.get(id) as CpuProfile['nodes'][number])
      .callFrame;
    const { where, group } = locate(url, functionName);
    const file = url.replace(/^.*\/(node_modules|src|dist)\//, '').replace(/^node:/, '');
    const name = `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
    const entry = byFunction.get(name) ?? { name, where, group, selfMs: 0 };
    entry.selfMs += selfMs;
    byFunction.set(name, entry);
  }

  const functions = [...byFunction.values()];
  const idleMs = functions.filter((f) => f.group === 'idle').reduce((sum, f) => sum + f.selfMs, 0);
  const totalMs = functions.reduce((sum, f) => sum + f.selfMs, 0);
  const busyMs = totalMs - idleMs;
  const share = (ms: number) => (busyMs > 0 ? (100 * ms) / busyMs : 0);
  const busy = functions.filter((f) => f.group !== 'idle');

  const sum = <K extends 'group' | 'where'>(key: K) => {
    const totals = new Map<string, { group: string; selfMs: number }>();
    for (const f of busy) {
      const entry = totals.get(f[key]) ?? { group: f.group, selfMs: 0 };
      entry.selfMs += f.selfMs;
      totals.set(f[key], entry);
    }
    return [...totals].sort((a, b) => b[1].selfMs - a[1].selfMs);
  };

  return {
    totalMs,
    idleMs,
    busyMs,
    top: busy
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, topCount)
      .map((f) => ({ ...f, percent: share(f.selfMs) })),
    groups: sum('group').map(([group, { selfMs }]) => ({ group, selfMs, percent: share(selfMs) })),
    packages: sum('where').map(([where, { group, selfMs }]) => ({
      where,
      group,
      selfMs,
      percent: share(selfMs),
    })),
  };
}

export function formatProfileSummary(summary: ProfileSummary): string {
  const lines = [
    `profile: ${(summary.totalMs / 1000).toFixed(1)} s, busy ${(summary.busyMs / 1000).toFixed(1)} s ` +
      `(${((100 * summary.busyMs) / summary.totalMs).toFixed(0)}%), idle ${(summary.idleMs / 1000).toFixed(1)} s`,
    '',
    'top self time (share of busy time):',
  ];
  for (const f of summary.top) {
    lines.push(`  ${f.percent.toFixed(1).padStart(5)}%  ${f.group.padEnd(15)} ${f.name}`);
  }
  lines.push('', 'by group:');
  for (const g of summary.groups) lines.push(`  ${g.percent.toFixed(1).padStart(5)}%  ${g.group}`);
  lines.push('', 'by package (over 0.5%):');
  for (const p of summary.packages.filter((p) => p.percent >= 0.5)) {
    lines.push(`  ${p.percent.toFixed(1).padStart(5)}%  ${p.where.padEnd(22)} (${p.group})`);
  }
  return lines.join('\n');
}
