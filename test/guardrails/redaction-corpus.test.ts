import { afterAll, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/guardrails/redactor.js';
import { REDACTION_KINDS, type RedactionKind } from '../../src/guardrails/redaction-kinds.js';

/** Values each kind must catch whole, written as they appear in real payloads. */
const POSITIVES: Record<RedactionKind, string[]> = {
  email: [
    'ada@example.com',
    'first.last+tag@mail.example.co.uk',
    'o_brien@sub-domain.example.org',
    'X.Y@EXAMPLE.IO',
    'support123@shop.example',
  ],
  phone: [
    '+44 20 7946 0958',
    '(415) 555-0132',
    '+1-202-555-0173',
    '415.555.0132',
    '020 7946 0958',
    '+33 6 12 34 56 78',
    '+14155550132',
    '+49 (0) 30 1234567',
    '06 12 34 56 78',
    '1 800 555 0199',
  ],
  card: [
    '4111 1111 1111 1111',
    '4111111111111111',
    '5500-0000-0000-0004',
    '3782 822463 10005',
    '6011 0009 9013 9424',
    '4012.8888.8888.1881',
    '4222222222222',
  ],
  iban: [
    'DE89 3704 0044 0532 0130 00',
    'DE89370400440532013000',
    'GB82 WEST 1234 5698 7654 32',
    'FR14 2004 1010 0505 0001 3M02 606',
    'NL91ABNA0417164300',
    'BE68 5390 0754 7034',
    'ch9300762011623852957',
  ],
  ip: [
    '192.168.1.20',
    '10.0.0.1',
    '255.255.255.255',
    '2001:db8::1',
    'fe80::1ff:fe23:4567:890a',
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
    '::1',
  ],
  secret: [
    'sk-proj-4fT9aQ2bX7mK1pL8vR3sW6yZ0cD5eH',
    'sk-A1b2C3d4E5f6G7h8I9j0K1l2M3n4',
    'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
    'github_pat_11ABCDEFG0abcdefghij_KLMNOPqrstuvwxyz0123456789',
    'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    'AKIAIOSFODNN7EXAMPLE',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----',
    '-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----',
  ],
};

/** Texts no kind may touch: dates, order numbers, versions, failed checksums, short numbers. */
const NEAR_MISSES = [
  'Ordered on 2024-01-15 at 10:30:45',
  'Due 15.01.2024, shipped 01/02/2024',
  'From 2024-01-15 - 2024-02-15',
  'Order 1234567890 confirmed',
  'Order #ORD-2024-000123',
  'Version 1.2.3 and v10.15.7, build 4.18.2.1',
  'Release 2.3.4.5 is out',
  'Card 4111 1111 1111 1112 was declined',
  'Reference 1234 5678 9012 3456',
  'IBAN DE89 3704 0044 0532 0130 01 is wrong',
  'Account GB82 WEST 1234 5698 7654 33',
  'Extension 555-0132, room 12 34',
  'Call 12345 or 555 0132',
  'Totals 42, 17.5 and 1e6',
  'Address 999.168.1.1 is no address',
  'Time 12:30:45, ratio 16:9',
  'namespace std::vector and a::b',
  'task-management-overview sk-learn-classifier',
  'user@localhost and @mention',
  'Write to a@@example.com, to @example.com or x@y',
  '{"price":19.99,"qty":12,"ts":"10:30","t2":"1:2:3"}',
  'Cards 41111111111111110 and 4111 1111 1111 111',
  'SKU 00000000000000000',
  'Tracking 1Z999AA10123456784',
];

interface Tally {
  caught: number;
  missed: string[];
  falsePositives: string[];
}

const tallies = Object.fromEntries(
  REDACTION_KINDS.map((kind) => [kind, { caught: 0, missed: [], falsePositives: [] } as Tally]),
) as Record<RedactionKind, Tally>;

afterAll(() => {
  const lines = REDACTION_KINDS.map((kind) => {
    const { caught, missed, falsePositives } = tallies[kind];
    const recall = caught / (caught + missed.length);
    const precision = caught / (caught + falsePositives.length || 1);
    return `${kind.padEnd(6)} recall ${recall.toFixed(2)} (${caught}/${caught + missed.length})  precision ${precision.toFixed(2)}`;
  });
  console.info(`redaction corpus\n${lines.join('\n')}`);
});

describe('the redaction kinds', () => {
  for (const kind of REDACTION_KINDS) {
    it(`catches every ${kind} whole`, () => {
      for (const value of POSITIVES[kind]) {
        const redactor = new Redactor(REDACTION_KINDS);
        const out = redactor.redact(`before ${value} after`);
        if (out === `before [${kind.toUpperCase()}_1] after`) tallies[kind].caught++;
        else tallies[kind].missed.push(`${value} → ${out}`);
      }
      expect(tallies[kind].missed).toEqual([]);
    });
  }

  it('leaves dates, order numbers, versions, failed checksums and short numbers alone', () => {
    const touched: string[] = [];
    for (const text of NEAR_MISSES) {
      const redactor = new Redactor(REDACTION_KINDS);
      const out = redactor.redact(text);
      if (out !== text) {
        touched.push(`${text} → ${out}`);
        for (const [kind, n] of Object.entries(redactor.counts())) {
          if (n > 0) tallies[kind as RedactionKind].falsePositives.push(text);
        }
      }
    }
    expect(touched).toEqual([]);
  });
});

describe('one event redacted', () => {
  it('numbers each kind from 1 in order of first appearance, the same value the same placeholder', () => {
    const redactor = new Redactor(['email', 'phone', 'card']);
    const first = redactor.redact(
      'Write to b@example.com or a@example.com; call +44 20 7946 0958.',
    );
    const second = redactor.redact(
      'a@example.com again, +44-20-7946-0958 written another way, card 4111-1111-1111-1111.',
    );
    expect(first).toBe('Write to [EMAIL_1] or [EMAIL_2]; call [PHONE_1].');
    expect(second).toBe('[EMAIL_2] again, [PHONE_1] written another way, card [CARD_1].');
    expect(redactor.counts()).toEqual({ email: 2, phone: 1, card: 1 });
  });

  it('gives an overlap to the first kind of secret, email, card, iban, ip, phone', () => {
    const redactor = new Redactor(REDACTION_KINDS);
    // An address that is also a phone-like run is the address; a card wins over a phone.
    expect(redactor.redact('at 192.168.100.200 now')).toBe('at [IP_1] now');
    expect(redactor.redact('4111 1111 1111 1111')).toBe('[CARD_1]');
    // The digits of an IBAN are the IBAN's, even when they would pass the Luhn check.
    expect(redactor.redact('GB82 WEST 1234 5698 7654 32')).toBe('[IBAN_1]');
  });

  it('reads an address at the end of a sentence once', () => {
    const redactor = new Redactor(['ip']);
    expect(redactor.redact('From 203.0.113.7. Then 2001:db8::1.')).toBe(
      'From [IP_1]. Then [IP_2].',
    );
  });

  it('reads an IPv4-mapped IPv6 address as one address, not its IPv4 part', () => {
    const redactor = new Redactor(['ip']);
    expect(redactor.redact('from ::ffff:192.0.2.1 and 2001:db8:0:0:0:0:2:1')).toBe(
      'from [IP_1] and [IP_2]',
    );
  });

  it('takes no address from inside the one before it', () => {
    const redactor = new Redactor(['email']);
    expect(redactor.redact('a@example.com.%b@example.org and c.d@e.fr')).toBe(
      '[EMAIL_1].%b@example.org and [EMAIL_2]',
    );
  });

  it('redacts only the kinds asked for', () => {
    const redactor = new Redactor(['email']);
    expect(redactor.redact('ada@example.com, +44 20 7946 0958')).toBe(
      '[EMAIL_1], +44 20 7946 0958',
    );
  });

  it('takes a phone ending where a space starts the next one', () => {
    const redactor = new Redactor(['phone']);
    expect(redactor.redact('415-555-0132 415-555-0199')).toBe('[PHONE_1] [PHONE_2]');
  });
});
