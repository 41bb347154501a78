import { describe, expect, it } from 'vitest';
import { parseAllowedIp } from '../../../src/channels/sender-settings.js';
import { isSenderAllowed, senderAddress } from '../../../src/hooks/verify/allowed-ips.js';

describe('allowed_ips', () => {
  it('lets everyone in when empty', () => {
    expect(isSenderAllowed([], '198.51.100.7')).toBe(true);
  });

  it.each([
    [['203.0.113.0/24'], '203.0.113.9', true],
    [['203.0.113.0/24'], '203.0.114.9', false],
    [['203.0.113.5'], '203.0.113.5', true],
    [['203.0.113.5'], '203.0.113.6', false],
    [['127.0.0.1'], '::ffff:127.0.0.1', true],
    [['2001:db8::/32'], '2001:db8:1::5', true],
    [['2001:db8::/32'], '2001:db9::5', false],
    [['::1'], '::1', true],
    [['::ffff:192.0.2.0/120'], '192.0.2.44', true],
    [['10.0.0.0/8', '::1'], '127.0.0.1', false],
  ])('%j lets %s in: %s', (list, sender, allowed) => {
    expect(isSenderAllowed(list, sender)).toBe(allowed);
  });

  it('refuses a sender without a usable address', () => {
    expect(isSenderAllowed(['0.0.0.0/0'], undefined)).toBe(false);
  });

  it('names entries that are not addresses or ranges', () => {
    expect(() => parseAllowedIp('10.0.0.0/8')).not.toThrow();
    for (const bad of ['2001:db8::/129', 'example.com', '10.0.0.0/33', '10.0.0']) {
      expect(() => parseAllowedIp(bad)).toThrow();
    }
  });

  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:0db8:0000::0005', '2001:db8::5'],
    ['::1', '::1'],
    ['not an address', 'not an address'],
  ])('keeps the sender %s as %s', (given, kept) => {
    expect(senderAddress(given)).toBe(kept);
  });
});
