import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/platform/config.js';

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no error');
}

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicBaseUrl: 'http://localhost:3000',
      databaseUrl: undefined,
      dataDir: './data',
      defaultChatQuota: 1000,
      rateLimit: { windowMs: 60_000, perChannel: 600, perIp: 1200 },
      bodyLimitBytes: 1024 * 1024,
      decodeMemoryLimitBytes: 256 * 1024 * 1024,
      ai: { provider: 'echo', timeoutMs: 30_000, maxInputChars: 200_000 },
      role: 'all',
      streamsPerKey: 10,
    });
    expect(Object.isFrozen(config.rateLimit)).toBe(true);
    expect(parseConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(parseConfig({ PUBLIC_BASE_URL: 'https://hooks.example.com/' }).publicBaseUrl).toBe(
      'https://hooks.example.com',
    );
    expect(parseConfig({ BODY_LIMIT: '512kb' }).bodyLimitBytes).toBe(512 * 1024);
  });

  it('puts a worker on PORT + 1 unless WORKER_PORT says otherwise', () => {
    expect(parseConfig({}).workerPort).toBe(3001);
    expect(parseConfig({ PORT: '8080' }).workerPort).toBe(8081);
    expect(parseConfig({ PORT: '8080', WORKER_PORT: '9100' }).workerPort).toBe(9100);
    // PORT=0 picks any free port, and so does the worker
    expect(parseConfig({ PORT: '0' }).workerPort).toBe(0);
  });

  it('lets ALLOW_PRIVATE_NETWORK=true allow every *_ALLOW_PRIVATE that is not set alone', () => {
    const allowed = (env: Record<string, string>) => {
      const config = parseConfig(env);
      return {
        delivery: config.delivery.allowPrivate,
        providers: config.ai.providersAllowPrivate,
        tools: config.tools.allowPrivate,
      };
    };
    expect(allowed({})).toEqual({ delivery: false, providers: false, tools: false });
    expect(allowed({ ALLOW_PRIVATE_NETWORK: 'true' })).toEqual({
      delivery: true,
      providers: true,
      tools: true,
    });
    expect(allowed({ ALLOW_PRIVATE_NETWORK: 'true', PROVIDERS_ALLOW_PRIVATE: 'false' })).toEqual({
      delivery: true,
      providers: false,
      tools: true,
    });
    expect(allowed({ ALLOW_PRIVATE_NETWORK: 'true', DELIVERY_ALLOW_PRIVATE: 'false' })).toEqual({
      delivery: false,
      providers: true,
      tools: true,
    });
    expect(allowed({ ALLOW_PRIVATE_NETWORK: 'true', TOOLS_ALLOW_PRIVATE: 'false' })).toEqual({
      delivery: true,
      providers: true,
      tools: false,
    });
    expect(allowed({ ALLOW_PRIVATE_NETWORK: 'false', DELIVERY_ALLOW_PRIVATE: 'true' })).toEqual({
      delivery: true,
      providers: false,
      tools: false,
    });
    expect(allowed({ TOOLS_ALLOW_PRIVATE: 'true' })).toEqual({
      delivery: false,
      providers: false,
      tools: true,
    });
    expect(() => parseConfig({ ALLOW_PRIVATE_NETWORK: 'yes' })).toThrow(/^ALLOW_PRIVATE_NETWORK /);
  });

  it('takes an ADMIN_EMAIL whose domain has no dot', () => {
    const config = parseConfig({ ADMIN_EMAIL: 'admin@localhost', ADMIN_PASSWORD: 'long enough' });
    expect(config.admin?.email).toBe('admin@localhost');
    expect(() => parseConfig({ ADMIN_EMAIL: 'admin', ADMIN_PASSWORD: 'long enough' })).toThrow(
      /^ADMIN_EMAIL must be an e-mail address \(got "admin"\)$/,
    );
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT must be a whole number/],
    [{ PORT: '70000' }, /^PORT must be at most 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must be a postgres:\/\/ URL or memory:\/\/$/],
    [{ RATE_LIMIT_PER_CHANNEL: '0' }, /^RATE_LIMIT_PER_CHANNEL must be at least 1/],
    [{ BODY_LIMIT: 'huge' }, /^BODY_LIMIT must be a size/],
    [{ DECODE_MEMORY_LIMIT: 'lots' }, /^DECODE_MEMORY_LIMIT must be a size/],
    [{ AI_PROVIDER: 'magic' }, /^AI_PROVIDER /],
    [
      { AI_PROVIDER: 'openai' },
      /^AI_BASE_URL is required when AI_PROVIDER=openai; AI_MODEL is required when AI_PROVIDER=openai$/,
    ],
    [{ ROLE: 'boss' }, /^ROLE /],
    [{ WORKER_PORT: '70000' }, /^WORKER_PORT must be at most 65535/],
    [{ PORT: '65535', ROLE: 'worker' }, /^WORKER_PORT must be set when PORT is 65535/],
    [{ STREAMS_PER_KEY: '0' }, /^STREAMS_PER_KEY must be at least 1/],
    [{ AI_MAX_INPUT_CHARS: '10' }, /^AI_MAX_INPUT_CHARS must be at least 100/],
    [{ ADMIN_EMAIL: 'a@b.co' }, /^ADMIN_PASSWORD must be set together/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /^PUBLIC_BASE_URL must be an http/],
  ])('refuses %o with one line naming the variable', (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
  });

  it('names every invalid variable in its one line, not only the first', () => {
    expect(() => parseConfig({ PORT: 'eighty', ROLE: 'boss', BODY_LIMIT: 'huge' })).toThrow(
      /^PORT must be a whole number from 0 to 65535 \(got "eighty"\); BODY_LIMIT must be a size such as 512kb or 1mb \(got "huge"\); ROLE .*\(got "boss"\)$/,
    );
  });

  it('never echoes secret values in the error', () => {
    expect(() => parseConfig({ ADMIN_API_KEY: 'short-secret' })).toThrow(
      /^ADMIN_API_KEY must be at least 16 characters long$/,
    );
  });

  it('reads SECRETS_KEY and SECRETS_KEY_PREVIOUS as 32 bytes in hex or base64, and refuses any other length', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 200));
    const hex = key.toString('hex');
    for (const written of [
      hex,
      hex.toUpperCase(),
      key.toString('base64'),
      key.toString('base64url'),
    ])
      expect(parseConfig({ SECRETS_KEY: written, SECRETS_KEY_PREVIOUS: written }).secrets).toEqual({
        key: hex,
        previousKey: hex,
      });
    expect(parseConfig({}).secrets).toEqual({ key: undefined, previousKey: undefined });

    const short = key.subarray(0, 31);
    const long = Buffer.concat([key, key.subarray(0, 1)]);
    for (const written of [
      short.toString('hex'),
      long.toString('hex'),
      short.toString('base64'),
      long.toString('base64'),
      `${hex.slice(0, 63)}g`,
      'a passphrase is not a key',
    ]) {
      for (const name of ['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']) {
        const message = errorOf(() => parseConfig({ [name]: written }));
        expect(message).toBe(
          `${name} must be 32 bytes written as 64 hex digits or in base64 (openssl rand -hex 32)`,
        );
      }
    }
  });
});

describe('OpenID Connect sign-in settings', () => {
  const oidc = {
    OIDC_ISSUER: 'https://login.example.com/realms/acme',
    OIDC_CLIENT_ID: 'hookprompt',
    OIDC_CLIENT_SECRET: 'the client secret',
  };

  it('is off without OIDC_*, with password sign-in on', () => {
    const config = parseConfig({});
    expect(config.oidc).toBeUndefined();
    expect(config.passwordLogin).toBe(true);
  });

  it('reads the three settings with the defaults of the rest', () => {
    expect(parseConfig(oidc).oidc).toEqual({
      issuer: oidc.OIDC_ISSUER,
      clientId: 'hookprompt',
      clientSecret: 'the client secret',
      name: 'SSO',
      allowedDomains: [],
      defaultRole: 'viewer',
    });
  });

  it('reads the allowed domains lower-cased and the default role', () => {
    const config = parseConfig({
      ...oidc,
      OIDC_NAME: 'Okta',
      OIDC_ALLOWED_DOMAINS: ' Acme.com, eu.acme.com ,acme.com',
      OIDC_DEFAULT_ROLE: 'editor',
      PASSWORD_LOGIN: 'false',
    });
    expect(config.oidc).toMatchObject({
      name: 'Okta',
      allowedDomains: ['acme.com', 'eu.acme.com'],
      defaultRole: 'editor',
    });
    expect(config.passwordLogin).toBe(false);
  });

  it.each([
    [
      { OIDC_ISSUER: oidc.OIDC_ISSUER },
      /^OIDC_CLIENT_ID must be set together with OIDC_ISSUER.*; OIDC_CLIENT_SECRET must be set/,
    ],
    [
      { ...oidc, OIDC_CLIENT_ID: '' },
      /^OIDC_CLIENT_ID must be set together with OIDC_ISSUER and OIDC_CLIENT_SECRET/,
    ],
    [{ OIDC_CLIENT_SECRET: 'x' }, /^OIDC_ISSUER must be set together with OIDC_CLIENT_SECRET/],
    [
      { ...oidc, OIDC_ISSUER: 'http://login.example.com' },
      /^OIDC_ISSUER must be an https:\/\/ URL \(http:\/\/ only on localhost\)/,
    ],
    [{ ...oidc, OIDC_DEFAULT_ROLE: 'admin' }, /^OIDC_DEFAULT_ROLE /],
    [
      { ...oidc, OIDC_ALLOWED_DOMAINS: 'acme.com, @acme' },
      /^OIDC_ALLOWED_DOMAINS must be comma-separated domain names/,
    ],
    [
      { PASSWORD_LOGIN: 'false' },
      /^PASSWORD_LOGIN can be false only with OpenID Connect sign-in set up/,
    ],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
  });

  it('takes a plain http issuer on localhost (a local identity provider)', () => {
    expect(
      parseConfig({ ...oidc, OIDC_ISSUER: 'http://localhost:8080/realms/dev' }).oidc?.issuer,
    ).toBe('http://localhost:8080/realms/dev');
  });
});
