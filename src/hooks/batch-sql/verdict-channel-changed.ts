/**
 * The channel as committed now. The pipeline may have checked a cached row: what it let through
 * is not stored for a channel disabled, deleted or given a new URL since; a refusal only needs
 * its channel to exist.
 */
export const CHANNEL_CHECKED = `channel_checked as (
    select requests.*,
           channels.id is null or (requests.refusal is null and not channels.enabled)
             as channel_changed
    from requests
    left join channels on channels.id = requests.channel_id
                      and channels.webhook_token_hash = requests.token_hash
                      and channels.deleted_at is null
  )`;

/** Nothing is stored; the pipeline checks the request again. */
export const CHANNEL_CHANGED = `when channel_changed then 'channel_changed'`;
