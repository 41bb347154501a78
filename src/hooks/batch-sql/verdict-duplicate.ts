/**
 * How the statement finds the keys that stored events hold:
 * - `looked-up`: it looks the batch's keys up first, and decides their requests (a duplicate,
 *   422 for another body, a key past its window freed and claimed again);
 * - `on-insert`: the insert of a key an event holds fails the whole statement (see isKeyTaken).
 *   Senders seldom repeat a request, and the lookup costs every keyed event. Keys are still
 *   looked up in a workspace short of room: a request refused for the quota or the budget
 *   stores no key, so no insert would find that it repeats an accepted one.
 */
export type KeyCheck = 'looked-up' | 'on-insert';

/** Which requests of the batch have their keys looked up, by KeyCheck. */
const KEYS_LOOKED_UP: Record<KeyCheck, string> = {
  'looked-up': 'dedup_key is not null and refusal is null',
  'on-insert': `dedup_key is not null and refusal is null
                                        and workspace_id in (select id from short_of_room)`,
};

/**
 * Stored events holding a key of the batch: within its window the key makes the request a
 * duplicate (or 422); past it, the key is freed (HELD_KEYS) and claimed again.
 */
const keyHolders = (keys: KeyCheck) => `key_holders as (
    select id, channel_id, dedup_key, dedup_body_hash, dedup_expires_at > now() as open,
           status, reply, error
    from events
    where (channel_id, dedup_key) in (select channel_id, dedup_key from requests
                                      where ${KEYS_LOOKED_UP[keys]})
      and dedup_key is not null
  )`;

export const KEY_HOLDERS: Record<KeyCheck, string> = {
  'looked-up': keyHolders('looked-up'),
  'on-insert': keyHolders('on-insert'),
};

/** The key is held within its window, for the same body or a key not kept with its body. */
export const DUPLICATE = `when key_holders.open and (body_hash is null or dedup_body_hash is null
                                        or dedup_body_hash = decode(body_hash, 'hex'))
               then 'duplicate'`;

/** The key is held within its window for another body: 422, recorded as rejected. */
export const KEY_REUSED = `when key_holders.open then 'key_reused'`;

/**
 * Stored events whose key the batch met count its duplicates, and a key past its window is
 * freed for the request that claims it (migrations/0019: only a batch that met one pays for an
 * update of events).
 */
export const HELD_KEYS = `held_keys as (
    select events_hold_keys(array_agg(holder_id), array_agg(duplicates), array_agg(open)) as n
    from (select holder_id, holder_open as open,
                 count(*) filter (where verdict = 'duplicate')::integer as duplicates
          from numbered where holder_id is not null
          group by holder_id, holder_open) as met
    where duplicates > 0 or not open
    having count(*) > 0
  )`;
