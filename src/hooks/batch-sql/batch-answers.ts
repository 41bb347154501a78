import { BUDGET_RESETS_AT } from '../../spend/budget-sql.js';

/** One row per request, in the batch's order: what the sender is answered (see ResultRow). */
export const ANSWERS = `select numbered.id, numbered.outcome,
       case when numbered.verdict in ('duplicate', 'key_reused') then numbered.holder_id
            else first_of_key.id end as first_id,
       -- A first event stored by this statement is as it was stored.
       case when numbered.verdict = 'duplicate' then numbered.holder_status
            when first_of_key.outcome = 'filtered' then 'filtered'
            else 'pending' end as first_status,
       case when numbered.verdict = 'duplicate' then numbered.holder_reply end as first_reply,
       case when numbered.verdict = 'duplicate' then numbered.holder_error end as first_error,
       numbered.chat_quota, numbered.monthly_budget_usd,
       case when numbered.outcome in ('quota_exceeded', 'budget_exceeded')
         then ${BUDGET_RESETS_AT} end as resets_at
from numbered
left join numbered first_of_key on first_of_key.position = numbered.first_position
order by numbered.position`;
