import { defineConfig } from 'vitest/config';

// Three projects, all run by `npm test`:
// - `app`: tests that talk to the service inside the test process (a real HTTP server on a
//   fresh database); run on every database and Node.js version CI covers. Files share their
//   worker's loaded modules (`isolate: false`): each file still gets its own database and app,
//   but the code and the embedded database's WebAssembly load once per worker, not per file.
// - `app-isolated`: the same, for the files that replace a module (`vi.mock`), which only works
//   in a file that loads the code afresh (`*.isolated.test.ts`).
// - `process`: tests where the operating-system process is the point (`*.process.test.ts`:
//   `npm start`, the worker, the admin CLI, signals, ports, locks, crashes); CI runs them once.
const inTestProcess = {
  exclude: [
    'test/e2e/**',
    'node_modules/**',
    'test/**/*.process.test.ts',
    'test/**/*.isolated.test.ts',
  ],
  include: ['test/**/*.test.ts'],
  isolate: false,
};

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two files at a time: much of a test's time is spent waiting (on sockets, timers, the
    // database), yet the embedded database's start is CPU work, and more files than cores
    // starve each other's start-ups. `--maxWorkers` overrides it.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'app', ...inTestProcess } },
      { extends: true, test: { name: 'app-isolated', include: ['test/**/*.isolated.test.ts'] } },
      {
        extends: true,
        // Each file starts servers of its own, some several at once and under load on purpose:
        // one file at a time leaves them the machine's cores.
        test: { name: 'process', include: ['test/**/*.process.test.ts'], maxWorkers: 1 },
      },
    ],
  },
});
