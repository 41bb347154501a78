-- An event's cost_usd is the sum over its calls (the last 20 kept, see events_calls_kept): once
-- older calls are dropped, their costs leave the event's sum with them.
--
-- events_calls_cost: the sum of the known costs of `calls`, null when none is known.
create function events_calls_cost(calls jsonb) returns numeric
language sql immutable parallel safe as $$
  select sum((call ->> 'cost_usd')::numeric)
  from jsonb_array_elements(calls) as made(call)
$$;
