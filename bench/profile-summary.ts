/**
 * Where a server spent its CPU: the top self-time functions of a `.cpuprofile` (from
 * `node --cpu-prof`), with totals per package and per group (ours, express, pg, pino, node
 * internals, GC). `npm run bench -- --profile` writes such a profile and prints this summary.
 *
 * Usage: tsx bench/profile-summary.ts <file.cpuprofile> [top count, default 15]
 */
import { formatProfileSummary, readCpuProfile, summariseProfile } from './lib/cpu-profile.js';

const [file, top = '15'] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top count]');
  process.exit(2);
}
console.log(formatProfileSummary(summariseProfile(readCpuProfile(file), Number(top))));
