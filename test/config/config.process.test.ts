import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import { TSX_IMPORT } from '../support/server-process.js';

/** Runs `src/main.ts` with only `env` (and PATH) and returns how it ended. */
async function start(env: Record<string, string>) {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [...TSX_IMPORT, 'src/main.ts'],
      { env: { PATH: process.env.PATH, DATABASE_URL: 'memory://', ...env }, timeout: 20_000 },
    );
    return { status: 0, stdout, stderr };
  } catch (error) {
    const ended = error as { code: number; stdout: string; stderr: string };
    return { status: ended.code, stdout: ended.stdout, stderr: ended.stderr };
  }
}

// The process is the point: what a refused start-up prints and its exit code (the rules
// themselves are in config.test.ts). Both starts run at once.
describe('a start-up with invalid configuration', () => {
  it.concurrent('stops with one line on stderr and exit code 1', async ({ expect }) => {
    const run = await start({ PORT: 'not-a-port' });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^hookprompt: invalid configuration: PORT must be a whole number/),
    ]);
  });

  it.concurrent(
    'names SECRETS_KEY when it is not 32 bytes, without its value',
    async ({ expect }) => {
      const key = 'c2hvcnQga2V5IG9mIDI0IGJ5dGVzIQ==';
      const run = await start({ SECRETS_KEY: key });
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toBe(
        'hookprompt: invalid configuration: SECRETS_KEY must be 32 bytes written as 64 hex digits or in base64 (openssl rand -hex 32)',
      );
      expect(run.stdout + run.stderr).not.toContain(key);
    },
  );

  it.concurrent(
    'names the OIDC_* variable missing from a partial OpenID Connect set-up',
    async ({ expect }) => {
      const run = await start({
        OIDC_ISSUER: 'https://login.example.com',
        OIDC_CLIENT_SECRET: 'the client secret',
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toMatch(
        /^hookprompt: invalid configuration: OIDC_CLIENT_ID must be set together with OIDC_ISSUER and OIDC_CLIENT_SECRET/,
      );
      expect(run.stdout + run.stderr).not.toContain('the client secret');
    },
  );
});
