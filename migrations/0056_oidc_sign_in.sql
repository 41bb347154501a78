-- Sign-in with the company's identity provider (OpenID Connect).
--
-- An admin made by a first SSO sign-in has no password: password sign-in refuses them until
-- `npm run admin -- set-password` gives them one.
alter table admins alter column password_hash drop not null;

-- One row per sign-in started at /auth/oidc/start, used up by its callback. The row is found by
-- the hash of `state` together with the hash of the browser's cookie, so a callback sent to
-- another browser, replayed, or with a changed state finds nothing. `nonce` and the PKCE code
-- verifier are only worth anything with a code the identity provider gives that browser, and
-- live ten minutes.
create table oidc_sign_ins (
  id bigint generated always as identity primary key,
  state_hash text not null unique,
  browser_hash text not null,
  nonce text not null,
  code_verifier text not null,
  -- the panel page to open after signing in (a local path)
  next_path text not null default '',
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index oidc_sign_ins_expires_idx on oidc_sign_ins (expires_at);
