// A request using a key of an earlier request of the same batch (marked `repeat` or `reused` by
// keyUsesInBatch) waits for that request's verdict.

export const REPEAT_IN_BATCH = `when key_use is not null then key_use`;

/**
 * A repeat is a duplicate of the batch's first request with its key once that is stored; another
 * body under the key is then 422. Either shares a refusal of the first; a first stored filtered
 * holds its key as an accepted one does.
 */
export const OUTCOMES = `outcomes as (
    select verdicts.*, first_of_key.position as first_position,
           case when verdicts.verdict not in ('repeat', 'reused') then verdicts.verdict
                when first_of_key.verdict not in ('accepted', 'filtered') then first_of_key.verdict
                when verdicts.verdict = 'repeat' then 'duplicate'
                else 'key_reused'
           end as outcome
    from verdicts
    left join verdicts first_of_key on verdicts.key_use is not null
                                   and first_of_key.key_use is null
                                   and first_of_key.channel_id = verdicts.channel_id
                                   and first_of_key.token_hash = verdicts.token_hash
                                   and first_of_key.dedup_key = verdicts.dedup_key
  )`;

/** A first request stored with its key counts the repeats of the batch as its duplicates. */
export const REPEATS = `repeats as (
    select first_position, count(*)::integer as n
    from numbered where verdict = 'repeat' and outcome = 'duplicate'
    group by first_position
  )`;
