export interface SentRequest {
  status: number | 'network_error';
  eventId?: string;
}

/**
 * Keeps `concurrency` senders posting to a webhook URL until `stop()`; records what each
 * request got back. A connection refused or reset counts as `network_error` (never a 200).
 */
export function startLoad(webhookUrl: string, concurrency: number) {
  const results: SentRequest[] = [];
  let running = true;
  let counter = 0;
  const sender = async () => {
    while (running) {
      const body = JSON.stringify({ order: { id: ++counter }, pad: 'x'.repeat(200) });
      try {
        const res = await fetch(webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const json = (await res.json().catch(() => ({}))) as { event_id?: string };
        results.push({ status: res.status, eventId: json.event_id });
      } catch {
        results.push({ status: 'network_error' });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const senders = Array.from({ length: concurrency }, sender);
  return {
    results,
    /** Resolves once `count` more answers have arrived. */
    async waitFor(count: number) {
      const target = results.length + count;
      while (results.length < target) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    async stop() {
      running = false;
      await Promise.all(senders);
      return results;
    },
  };
}

export function summarise(results: SentRequest[]) {
  const byStatus: Record<string, number> = {};
  for (const r of results) byStatus[String(r.status)] = (byStatus[String(r.status)] ?? 0) + 1;
  const acceptedIds = results.filter((r) => r.status === 200).map((r) => r.eventId as string);
  return { sent: results.length, byStatus, acceptedIds };
}
