-- What Brain Logs shows of each delivery attempt besides its status and error: where the request
-- went and the start of what came back. Both are written for admins to read and never hold a
-- secret: `target` is a URL without its userinfo, query or fragment, or a platform's method and
-- chat ("Telegram sendMessage to chat 42"), never a token or a secret webhook URL; `answer` has
-- the destination's secrets cut out. Null for attempts recorded before this migration.
alter table delivery_attempts
  -- where the attempt was sent, described without a secret
  add column target text,
  -- the first 512 characters of the answer's body, NULs replaced and whitespace collapsed, the
  -- destination's secrets cut out; for 2xx answers too; null when no answer came (a timeout, a
  -- refused address, a reset connection) or no request was made
  add column answer text check (length(answer) <= 512);
