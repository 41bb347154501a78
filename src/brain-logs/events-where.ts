import {
  FINISHED_STATUSES,
  QUEUED_STATUSES,
  REPLY_OUTCOMES,
  sqlStatusList,
} from '../events/event-states.js';
import { deliveryCondition, type DeliveryCondition } from './delivery-filter.js';
import type { PayloadCondition } from './payload-filter.js';

/** The conditions of a Brain Logs filter, as the repo receives them (times as ISO text). */
export interface EventConditions {
  workspaceId: string;
  channelId?: string;
  status?: string;
  /** Inclusive, ISO 8601. */
  from?: string;
  /** Exclusive, ISO 8601. */
  to?: string;
  /** Case-insensitive text in the payload, prompt, reply or error. */
  q?: string;
  payload?: readonly PayloadCondition[];
  threadKey?: string;
  version?: number;
  /** The events with a message in this state (to this target), or with none. */
  delivery?: DeliveryCondition;
}

/**
 * The searched text of an event. Written exactly as in the trigram index of migration 0010
 * (PostgreSQL uses an expression index only for the same expression). The unit separator
 * keeps a match from spanning two fields: JSON text never holds it raw.
 */
const SEARCH_TEXT = `(payload || E'\\x1f' || coalesce(prompt, '') || E'\\x1f' || coalesce(reply, '')
          || E'\\x1f' || coalesce(error, ''))`;
const SEPARATOR = '\x1f';

// The search indexes of migration 0012 hold finished events only (each is indexed once, when
// it finishes); the few unfinished ones are read through the queue index. Each condition is
// written as one branch per part, with the part's status condition spelled out: PostgreSQL
// uses a partial index for a branch only when the branch itself implies the index's predicate.
const FINISHED = `status in ${sqlStatusList(FINISHED_STATUSES)}`;
// The unfinished ones in two branches, each implying its partial index's predicate: those in the
// queue (the queue index) and those waiting for an approval (migration 0057's index).
const QUEUED = `status in ${sqlStatusList(QUEUED_STATUSES)}`;
const AWAITING = `status in ${sqlStatusList(['awaiting_approval'])}`;
/** The events whose payload_json is computed (migration 0012). */
const PARSED = `status in ${sqlStatusList(REPLY_OUTCOMES)}`;

type Param = (value: unknown) => string;

/**
 * `where` terms for a filter; each value becomes a parameter through `param`. `listing`: the
 * statement reads the events in an index's order and stops at a limit (see deliveryCondition).
 */
export function eventsWhere(c: EventConditions, param: Param, listing = false): string[] {
  const where = [`workspace_id = ${param(c.workspaceId)}`];
  if (c.channelId !== undefined) where.push(`channel_id = ${param(c.channelId)}`);
  if (c.status !== undefined) where.push(`status = ${param(c.status)}`);
  if (c.from !== undefined) where.push(`received_at >= ${param(c.from)}::timestamptz`);
  if (c.to !== undefined) where.push(`received_at < ${param(c.to)}::timestamptz`);
  if (c.threadKey !== undefined) where.push(`thread_key = ${param(c.threadKey)}`);
  if (c.version !== undefined) where.push(`version = ${param(c.version)}`);
  if (c.q !== undefined && c.q !== '') where.push(textCondition(c.q, param));
  for (const condition of c.payload ?? []) where.push(payloadCondition(condition, param));
  if (c.delivery !== undefined) where.push(deliveryCondition(c.delivery, param, listing));
  return where;
}

function textCondition(q: string, param: Param): string {
  const pattern = param(`%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
  if (!q.includes(SEPARATOR)) {
    const match = `${SEARCH_TEXT} ilike ${pattern}`;
    return `((${FINISHED} and ${match}) or (${QUEUED} and ${match}) or (${AWAITING} and ${match}))`;
  }
  return `(payload ilike ${pattern} or prompt ilike ${pattern} or reply ilike ${pattern} or error ilike ${pattern})`;
}

const CANONICAL_INDEX = /^(?:0|[1-9]\d*)$/;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A superset of the events whose `{{path}}` renders to the value; matchesPayload decides. Each
 * branch is one the GIN index on payload_json answers where it can (containment), so a rare
 * value is found without reading the channel's whole history:
 * - a string (and `true`/`false`) by containment when the path names object keys only, or by
 *   equality at the path when a segment may index an array;
 * - a number, an object or an array by their JSON type at the path (jsonb rewrites number and
 *   object text, so the exact comparison is left to the template engine);
 * - the flat key `{"order.id": 5}` that `{{order.id}}` falls back to;
 * - and every event without payload_json: refused requests, payloads jsonb refused, and the
 *   unfinished events (not parsed until they finish), which only the engine can read.
 * An empty value also matches absent fields, which no index lists: then every event is a candidate.
 */
function payloadCondition({ path, value }: PayloadCondition, param: Param): string {
  if (value === '' || path === '.') return 'true';
  const keys = path.split('.');
  const scalars = [JSON.stringify(value)];
  if (value === 'true' || value === 'false') scalars.push(value);
  const branches: string[] = [];
  const at = (target: string[]) => `payload_json #> ${param(target)}::text[]`;
  const byType = (target: string[]) => {
    if (JSON_NUMBER.test(value)) branches.push(`jsonb_typeof(${at(target)}) = 'number'`);
    if (value.startsWith('{') || value.startsWith('[')) {
      branches.push(`jsonb_typeof(${at(target)}) in ('object', 'array')`);
    }
  };
  for (const scalar of scalars) {
    if (keys.some((key) => CANONICAL_INDEX.test(key))) {
      branches.push(`${at(keys)} = ${param(scalar)}::jsonb`);
    } else {
      branches.push(`payload_json @> ${param(nested(keys, scalar))}::jsonb`);
    }
    if (keys.length > 1) branches.push(`payload_json @> ${param(nested([path], scalar))}::jsonb`);
  }
  byType(keys);
  if (keys.length > 1) byType([path]);
  const parsed = branches.map((branch) => `(${PARSED} and ${branch})`);
  return `(${parsed.join(' or ')} or (payload_json is null and ${FINISHED}) or ${QUEUED} or ${AWAITING})`;
}

/** `{"a":{"b":<scalar>}}` for the keys a, b. */
function nested(keys: string[], scalarJson: string): string {
  return keys.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, scalarJson);
}
