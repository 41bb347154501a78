/**
 * Tables of the baselines, beside (not inside) hookprompt's schema. `events_baseline` keeps the
 * payload as text like hookprompt's events table (jsonb would make the baseline slower, not
 * fairer); it has only its primary key, where hookprompt's events carry three more indexes.
 */
export const BASELINE_SCHEMA = `
  create table events_baseline (
    id bigint generated always as identity primary key,
    received_at timestamptz not null default now(),
    payload text not null
  );
  create table quota (
    id integer primary key,
    used bigint not null,
    cap bigint not null
  );
  insert into quota (id, used, cap) values (1, 0, 2000000000);
`;
