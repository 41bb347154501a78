import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/platform/config.js';

describe('worker configuration', () => {
  it('has defaults that suit one small instance', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      workerConcurrency: 8,
      workerPollIntervalMs: 1000,
      workerLeaseMs: 60_000,
      workerRetryBaseMs: 1000,
      workerShutdownGraceMs: 10_000,
    });
    expect(config.ai.maxAttempts).toBe(5);
  });

  it('keeps the default lease 30 s longer than one AI call', () => {
    expect(parseConfig({ AI_TIMEOUT_MS: '120000' }).workerLeaseMs).toBe(150_000);
  });

  it('refuses a lease that an AI call could outlast', () => {
    expect(() => parseConfig({ AI_TIMEOUT_MS: '5000', WORKER_LEASE_MS: '5000' })).toThrow(
      new ConfigError('WORKER_LEASE_MS must be greater than AI_TIMEOUT_MS (got "5000")'),
    );
    expect(parseConfig({ AI_TIMEOUT_MS: '5000', WORKER_LEASE_MS: '5001' }).workerLeaseMs).toBe(
      5001,
    );
  });

  it('names the variable when a value is unusable', () => {
    expect(() => parseConfig({ WORKER_POLL_INTERVAL_MS: 'soon' })).toThrow(
      /^WORKER_POLL_INTERVAL_MS must be a whole number/,
    );
    expect(() => parseConfig({ WORKER_POLL_INTERVAL_MS: '5' })).toThrow(
      'WORKER_POLL_INTERVAL_MS must be at least 10 (got "5")',
    );
    expect(() => parseConfig({ WORKER_RETRY_BASE_MS: '-1' })).toThrow(/^WORKER_RETRY_BASE_MS /);
    expect(() => parseConfig({ WORKER_SHUTDOWN_GRACE_MS: '1h' })).toThrow(
      /^WORKER_SHUTDOWN_GRACE_MS /,
    );
  });
});
