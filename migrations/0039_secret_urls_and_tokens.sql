-- Secrets at rest, part four: the webhook token (looked up by webhook_token_hash, kept to show
-- the URL) and every URL that holds credentials or a query string are sealed like the other
-- secrets. The key is only in the service: at its next start it seals what is stored here as
-- it is (src/secrets/secret-columns.ts lists the columns, src/secrets/secret-values.ts says
-- which URLs are secrets), as it did for the secrets of earlier versions.

-- An alert's `webhook` URL leaves its notify document for a column of its own, which the
-- service seals when the URL holds a secret.
alter table alerts add column notify_url text;
update alerts set notify_url = notify->>'url', notify = notify - 'url'
where notify->>'url' is not null;

-- The API takes URLs of at most 2000 characters; sealed, one is longer.
alter table channels drop constraint channels_reply_url_check;
alter table channels add constraint channels_reply_url_check
  check (length(reply_url) <= 10000);
alter table destinations drop constraint destinations_url_check;
alter table destinations add constraint destinations_url_check check (length(url) <= 10000);
alter table alerts add constraint alerts_notify_url_check check (length(notify_url) <= 10000);
