-- A refused request keeps only the start of its body (the first 64 KB); this says when it was cut.
alter table events add column payload_truncated boolean not null default false;

-- A webhook that could not be stored in time is answered 503, and its event must then never be
-- stored. The receiver's transactions name their deadline (`set local
-- hookprompt.commit_deadline`); this check runs at COMMIT and fails one that the database
-- reaches after it (say, after being paused), so the commit's outcome agrees with the answer.
create function events_check_commit_deadline() returns trigger
language plpgsql as $$
begin
  if clock_timestamp() > current_setting('hookprompt.commit_deadline')::timestamptz then
    raise exception 'the deadline of this transaction passed before it could commit'
      using errcode = '57014';
  end if;
  return null;
end;
$$;

create constraint trigger events_commit_deadline
  after insert on events
  deferrable initially deferred
  for each row
  when (coalesce(current_setting('hookprompt.commit_deadline', true), '') <> '')
  execute function events_check_commit_deadline();
