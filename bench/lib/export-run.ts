/**
 * One Brain Logs export (CSV, one channel's events) into a byte-counting sink, in a process of
 * its own so that its peak RSS is the export's and not the benchmark's. Prints one JSON line.
 */
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { openPostgres } from '../../src/db/postgres.js';
import { exportEvents } from '../../src/brain-logs/events-export.js';
import { EventReader } from '../../src/brain-logs/event-reader.js';

const db = openPostgres({ url: process.env.EXPORT_DATABASE_URL as string, max: 1 });
let bytes = 0;
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    bytes += chunk.length;
    // A consumer as slow as the next tick: the export has to wait for it.
    setImmediate(done);
  },
});
// What the process holds before exporting (Node, tsx, the modules): the export's own memory is
// what its peak adds to this.
const rssBeforeKb = Math.round(process.memoryUsage().rss / 1024);
const started = performance.now();
const rows = await exportEvents(
  new EventReader(db),
  {
    workspaceId: process.env.EXPORT_WORKSPACE as string,
    channelId: process.env.EXPORT_CHANNEL as string,
  },
  'csv',
  sink,
);
const seconds = (performance.now() - started) / 1000;
await db.close();
console.log(
  JSON.stringify({ rows, bytes, seconds, rssBeforeKb, maxRssKb: process.resourceUsage().maxRSS }),
);
