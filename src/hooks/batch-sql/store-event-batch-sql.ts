import { FILTERED, LIMITS, PAYLOADS, REJECTED, REQUESTS } from './batch-requests.js';
import { ANSWERS } from './batch-answers.js';
import { CHANNEL_CHANGED, CHANNEL_CHECKED } from './verdict-channel-changed.js';
import {
  DUPLICATE,
  HELD_KEYS,
  KEY_HOLDERS,
  KEY_REUSED,
  type KeyCheck,
} from './verdict-duplicate.js';
import { OUTCOMES, REPEAT_IN_BATCH, REPEATS } from './verdict-repeat.js';
import { BUDGET_EXCEEDED, QUOTA_EXCEEDED, ROOM, SHORT_OF_ROOM } from './verdict-room.js';
import { ACCEPTED, NUMBERED, SPENT, STORED } from './verdict-stored.js';

/**
 * The verdicts in the order senders rely on: duplicates before the quota (they use none of it),
 * then what accept_when filtered (stored, using none either), the budget after the quota.
 */
const VERDICTS_IN_ORDER = [
  CHANNEL_CHANGED,
  REJECTED,
  DUPLICATE,
  KEY_REUSED,
  REPEAT_IN_BATCH,
  FILTERED,
  QUOTA_EXCEEDED,
  BUDGET_EXCEEDED,
  ACCEPTED,
];

const VERDICTS = `verdicts as (
    select channel_checked.*, room.chat_quota, room.monthly_budget_usd,
           key_holders.id as holder_id, key_holders.open as holder_open,
           key_holders.status as holder_status, key_holders.reply as holder_reply,
           key_holders.error as holder_error,
           case
             ${VERDICTS_IN_ORDER.join('\n             ')}
           end as verdict
    from channel_checked
    left join key_holders on key_holders.channel_id = channel_checked.channel_id
                         and key_holders.dedup_key = channel_checked.dedup_key
    left join room on room.id = channel_checked.workspace_id
  )`;

/**
 * The one writer of the receiver: every request of a batch, accepted or refused, in one statement
 * that commits on its own by its deadline or not at all. Its parts come in the order each reads
 * the ones before it: the batch, what the verdicts look up, the verdicts, then what is stored,
 * counted and answered.
 */
const storeEventBatchStatement = (keys: KeyCheck) => `
with
  ${[
    LIMITS,
    PAYLOADS,
    REQUESTS,
    CHANNEL_CHECKED,
    ROOM,
    SHORT_OF_ROOM,
    KEY_HOLDERS[keys],
    VERDICTS,
    OUTCOMES,
    NUMBERED,
    HELD_KEYS,
    REPEATS,
    STORED,
    SPENT,
  ].join(',\n  ')}
${ANSWERS}`;

/**
 * Built once per KeyCheck: a new string per call would be flattened and compared again by the
 * driver.
 */
export const STORE_EVENT_BATCH: Record<KeyCheck, string> = {
  'looked-up': storeEventBatchStatement('looked-up'),
  'on-insert': storeEventBatchStatement('on-insert'),
};
