-- Trials that say which is better: a trial's checks (conditions on each side's status and
-- reply) and its judge (a model comparing the two replies of each result with a rubric). The
-- checks are applied when the trial is read; the judge's verdict on a result is asked once, by
-- the trial worker right after the candidate, and kept with what it cost.
alter table trials add column checks jsonb;
alter table trials add column judge jsonb;
alter table trial_results add column judge jsonb;
alter table trial_results add column judge_cost_usd numeric;
