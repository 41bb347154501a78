import type { AiCall } from '../ai/fallback-runner.js';
import type { Queryable } from '../db/database.js';

// A call's own status (ok or error), bound as a parameter: an event's statuses are the only
// status literals the SQL of src/ writes (test/events/event-states.test.ts).
const FAILED_CALL: AiCall['status'] = 'error';

/** What the calls through one provider came to, as the events list them. */
export interface ProviderCalls {
  /** The provider's name as the calls name it (`default` for the server's own). */
  provider: string;
  calls: number;
  errors: number;
  /** The median call's latency in milliseconds. */
  p50_ms: number;
}

/**
 * Per provider, the calls listed by the workspace's events received since `since`: every call,
 * fallbacks' and failed ones included, so a primary that fails behind a working fallback shows
 * its errors. One range of events_workspace_received_chart_idx; each event lists at most its
 * last 20 calls (events_calls_kept), which only an event retried many times exceeds.
 */
export async function providerCalls(
  db: Queryable,
  workspaceId: string,
  since: Date,
): Promise<ProviderCalls[]> {
  const { rows } = await db.query<ProviderCalls>(
    `select call.provider, count(*)::int as calls,
            count(*) filter (where call.status = $3)::int as errors,
            percentile_cont(0.5) within group (order by call.latency_ms)::float8 as p50_ms
     from events
       cross join lateral jsonb_to_recordset(events.calls)
         as call(provider text, status text, latency_ms float8)
     where events.workspace_id = $1 and events.received_at >= $2
     group by call.provider
     order by call.provider`,
    [workspaceId, since, FAILED_CALL],
  );
  return rows;
}
