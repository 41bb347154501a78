/**
 * The value of one series as the app's `/metrics` shows it now: the line that starts with
 * `series` (its name and labels, as Prometheus writes them); 0 while it has not been counted.
 */
export async function metricValue(baseUrl: string, series: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
