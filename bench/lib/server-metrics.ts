/**
 * The value of one series of a server's Prometheus metrics (`/metrics` on the server's origin),
 * e.g. `nodejs_gc_duration_seconds_count{kind="major"}`; undefined when the server has none yet.
 */
export async function metricValue(serverUrl: string, series: string): Promise<number | undefined> {
  return (await metricSamples(serverUrl)).get(series);
}

/** Every sample of a server's Prometheus metrics, by series (name and labels as written). */
export async function metricSamples(serverUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', serverUrl))).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/**
 * How a histogram's observations between two scrapes fell: how many there were, how many took
 * longer than `slowerThan` (a bucket's bound, in the histogram's unit), and the bound of the
 * smallest bucket holding them all (Infinity when some fell past the last bound).
 */
export function histogramBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  name: string,
  slowerThan: number,
): { count: number; slower: number; slowestWithin: number } {
  const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
  const count = delta(`${name}_count`);
  const bounds = [...after.keys()]
    .map((series) => /^(.+)_bucket\{le="([^"]+)"\}$/.exec(series))
    .filter((match) => match?.[1] === name)
    .map((match) => parseBound((match as RegExpExecArray)[2] as string))
    .sort((x, y) => x - y);
  const within = (bound: number) => delta(`${name}_bucket{le="${formatBound(bound)}"}`);
  const slowestWithin = bounds.find((bound) => within(bound) === count) ?? Infinity;
  return { count, slower: count - within(slowerThan), slowestWithin };
}

/** A bucket bound as prom-client writes it in `le`, and back. */
const formatBound = (bound: number) => (bound === Infinity ? '+Inf' : String(bound));
const parseBound = (le: string) => (le === '+Inf' ? Infinity : Number(le));
