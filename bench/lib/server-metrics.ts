/**
 * The value of one series of a server's Prometheus metrics (`/metrics` on the server's origin),
 * e.g. `nodejs_gc_duration_seconds_count{kind="major"}`; undefined when the server has none yet.
 */
export async function metricValue(serverUrl: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(new URL('/metrics', serverUrl))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
