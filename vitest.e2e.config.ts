import { defineConfig } from 'vitest/config';

// Browser tests: a real server driven by Chromium (`npm run test:e2e`).
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
