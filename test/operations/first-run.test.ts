import { describe, expect, it } from 'vitest';
import { firstRunGuide } from '../../src/auth/first-run.js';
import type { Config } from '../../src/platform/config.js';
import { useTestApp } from '../support/harness.js';

// When `npm start` prints its first-run text (first-run.process.test.ts prints it from a real
// start and runs its commands).
describe('the first-run text', () => {
  const { app } = useTestApp();

  const guideWith = (config: Partial<Config>) =>
    firstRunGuide(
      {
        config: { ...app.ctx.config, ...config },
        apiKeys: app.ctx.apiKeys,
        defaultWorkspaceId: app.ctx.defaultWorkspaceId,
      },
      3000,
    );

  it('asks for a key instead when the database is not kept in DATA_DIR', async () => {
    const guide = await guideWith({ adminApiKey: undefined, databaseUrl: 'memory://' });
    expect(guide).toContain('until the default workspace has an API key');
    expect(guide).toContain('KEY=<the key>');
  });

  it('names the one switch for a model or a receiver on this machine, until it is set', async () => {
    const refused = { ...app.ctx.config.ai, providersAllowPrivate: false };
    const hint = 'Start with ALLOW_PRIVATE_NETWORK=true';
    expect(
      await guideWith({ adminApiKey: undefined, databaseUrl: 'memory://', ai: refused }),
    ).toContain(hint);
    const allowed = {
      ai: { ...app.ctx.config.ai, providersAllowPrivate: true },
      delivery: { ...app.ctx.config.delivery, allowPrivate: true },
      tools: { ...app.ctx.config.tools, allowPrivate: true },
    };
    expect(
      await guideWith({ adminApiKey: undefined, databaseUrl: 'memory://', ...allowed }),
    ).not.toContain(hint);
  });

  it('says nothing when ADMIN_API_KEY is set', async () => {
    const guide = await guideWith({ adminApiKey: 'an-admin-key-of-enough-length' });
    expect(guide).toBeUndefined();
  });
});
