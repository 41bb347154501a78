-- Alert notifications are finished by id and lease owner, as the other queues are: a process
-- whose lease ran out cannot write over the outcome of the one that took the notification on.
alter table alert_changes add column locked_by text;
