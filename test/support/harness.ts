import { afterAll, afterEach, beforeAll } from 'vitest';
import { Driver } from './driver.js';
import { FakeAiServer } from './fake-ai-server.js';
import { FakeAnthropicServer } from './fake-anthropic-server.js';
import { FakeChats } from './fake-chats.js';
import { ReplyReceiver } from './reply-receiver.js';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.js';
import type { TestDatabase } from './test-database.js';

/**
 * One way to set up a test file: each `use…` call registers the start (beforeAll), the reset
 * between tests (afterEach) and the stop (afterAll) of one thing, and returns it at once as a
 * stand-in that forwards to the real thing once it has started:
 *
 *   const { app, driver, ai } = useTestApp({ ai: true });
 *
 * Things are stopped in the reverse order of their start (the app before the fakes it talks to).
 */

interface FixtureHooks<T> {
  /** Between tests: forget what one test left behind (recorded requests, scripted replies). */
  reset?: (value: T) => unknown;
  stop: (value: T) => unknown;
}

/** Registers a thing's start, reset and stop; returns a stand-in usable once beforeAll ran. */
export function useFixture<T extends object>(start: () => Promise<T>, hooks: FixtureHooks<T>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  if (hooks.reset) afterEach(() => (value ? hooks.reset?.(value) : undefined));
  afterAll(async () => {
    if (value) await hooks.stop(value);
    value = undefined;
  });
  return lateBound(() => {
    if (!value) throw new Error('a test fixture was used before beforeAll started it');
    return value;
  });
}

// The stand-in: property reads, writes and method calls go to the started thing, with `this`
// bound to it so that getters and private fields behave as on the thing itself.
function lateBound<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_, property) {
      const target = current();
      const member = Reflect.get(target, property, target) as unknown;
      return typeof member === 'function' ? member.bind(target) : member;
    },
    set(_, property, newValue) {
      return Reflect.set(current(), property, newValue);
    },
    has: (_, property) => Reflect.has(current(), property),
  });
}

/** A fake OpenAI-compatible server, its requests and script forgotten after each test. */
export function useFakeAi(options: Parameters<typeof FakeAiServer.start>[0] = {}): FakeAiServer {
  return useFixture(() => FakeAiServer.start(options), {
    reset: (ai) => ai.reset(),
    stop: (ai) => ai.close(),
  });
}

/** A fake Anthropic Messages server, its requests and script forgotten after each test. */
export function useFakeAnthropic(): FakeAnthropicServer {
  return useFixture(() => FakeAnthropicServer.start(), {
    reset: (ai) => ai.reset(),
    stop: (ai) => ai.close(),
  });
}

/** A server that records what the service delivers to a channel's reply URL. */
export function useReplyReceiver(): ReplyReceiver {
  return useFixture(() => ReplyReceiver.start(), { stop: (receiver) => receiver.close() });
}

/** Fake Slack, Telegram, Discord and Teams endpoints that record what destinations post. */
export function useFakeChats(): FakeChats {
  return useFixture(() => FakeChats.start(), { stop: (chats) => chats.close() });
}

export interface UseTestAppOptions extends Omit<TestAppOptions, 'env' | 'database'> {
  /** Start a fake OpenAI-compatible server and make it the app's `default` provider. */
  ai?: boolean;
  /**
   * Settings on top of the test defaults; a function is called when the app starts, so it can
   * read the addresses of fakes started before it.
   */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Share another app's database (several instances on one database): `() => first.database`. */
  database?: () => TestDatabase;
}

export interface TestAppHarness {
  app: TestApp;
  /** Domain verbs over the app's HTTP API, with the test admin key. */
  driver: Driver;
  /** The fake AI server (with `ai: true`). */
  ai: FakeAiServer;
}

/** A test app on a fresh migrated database (and, with `ai: true`, a fake AI server). */
export function useTestApp(options: UseTestAppOptions = {}): TestAppHarness {
  const { ai: withAi, env, database, ...appOptions } = options;
  const ai = withAi ? useFakeAi() : noFake<FakeAiServer>('useTestApp({ ai: true })');
  const app = useFixture(
    () =>
      startTestApp({
        ...appOptions,
        database: database?.(),
        env: { ...(withAi ? ai.env() : {}), ...(typeof env === 'function' ? env() : env) },
      }),
    { stop: (started) => started.close() },
  );
  let driver: Driver | undefined;
  return { app, driver: lateBound(() => (driver ??= new Driver(app))), ai };
}

function noFake<T extends object>(howToGetOne: string): T {
  return lateBound<T>(() => {
    throw new Error(`this test file started no fake AI server: use ${howToGetOne}`);
  });
}
