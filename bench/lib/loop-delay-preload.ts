/**
 * Loaded into a server process with `--import` by bench/reply-check-bench.ts: watches the event
 * loop's delay and, on SIGUSR2, writes what it saw since the last signal (milliseconds) to
 * LOOP_DELAY_FILE.
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.LOOP_DELAY_FILE;
if (!file) throw new Error('LOOP_DELAY_FILE is not set');
const RESOLUTION_MS = 5;
const delays = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delays.enable();

process.on('SIGUSR2', () => {
  // The histogram holds whole sampling intervals: the delay is what exceeds the interval.
  const ms = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
  const seen = {
    p50: ms(delays.percentile(50)),
    p99: ms(delays.percentile(99)),
    max: ms(delays.max),
  };
  writeFileSync(file, JSON.stringify(seen));
  delays.reset();
});
