import { describe, expect, it } from 'vitest';
import { verifyRequest, type SignedRequest } from '../../../src/hooks/verify/schemes.js';
import type { VerificationSettings } from '../../../src/channels/sender-settings.js';
import { nowSeconds, SIGNERS } from '../../support/signers.js';

function request(body: string, headers: Record<string, string>): SignedRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { body: Buffer.from(body), header: (name) => lower[name] || undefined };
}

const body = '{"order":{"id":1,"total":"9.50"}}';

describe.each(SIGNERS)('verification scheme $scheme against its real signer', (signer) => {
  const settings = signer.verification as unknown as VerificationSettings;
  const check = (headers: Record<string, string>, text = body, secret = signer.secret) => {
    try {
      verifyRequest(request(text, headers), settings, secret);
      return 'ok';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('accepts a correctly signed body', async () => {
    expect(check(await signer.sign(body, signer.secret, nowSeconds()))).toBe('ok');
  });

  it('refuses a body signed with another secret', async () => {
    expect(check(await signer.sign(body, signer.otherSecret, nowSeconds()))).toMatch(
      /match|does not hold/,
    );
  });

  it('refuses a request without the signature header', async () => {
    const headers = await signer.sign(body, signer.secret, nowSeconds());
    const without = Object.fromEntries(
      Object.entries(headers).filter(([name]) => name.toLowerCase() !== signer.signatureHeader),
    );
    expect(check(without)).toMatch(/header is missing/);
  });

  it('refuses a body changed by one byte', async () => {
    if (signer.scheme === 'header-secret') return; // the secret itself, not a signature of the body
    const headers = await signer.sign(body, signer.secret, nowSeconds());
    expect(check(headers, body.replace('9.50', '9.51'))).toMatch(/match/);
  });

  it.runIf(signer.timestamped)('refuses a timestamp outside the tolerance', async () => {
    const headers = await signer.sign(body, signer.secret, nowSeconds() - 301);
    expect(check(headers)).toMatch(/outside the tolerance of 300 s/);
    const future = await signer.sign(body, signer.secret, nowSeconds() + 400);
    expect(check(future)).toMatch(/outside the tolerance/);
  });
});

describe('standard-webhooks with svix- header names', () => {
  it('accepts svix-id, svix-timestamp and svix-signature', async () => {
    const signer = SIGNERS[0]!;
    const headers = await signer.sign(body, signer.secret, nowSeconds());
    const svix = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.replace('webhook-', 'svix-'), value]),
    );
    expect(() =>
      verifyRequest(request(body, svix), { scheme: 'standard-webhooks' }, signer.secret),
    ).not.toThrow();
  });

  it('accepts when any of several signatures matches', async () => {
    const signer = SIGNERS[0]!;
    const headers = await signer.sign(body, signer.secret, nowSeconds());
    headers['webhook-signature'] = `v1,AAAA ${headers['webhook-signature']}`;
    expect(() =>
      verifyRequest(request(body, headers), { scheme: 'standard-webhooks' }, signer.secret),
    ).not.toThrow();
  });

  it('refuses the right signature written any other way than its exact base64', async () => {
    const signer = SIGNERS[0]!;
    const headers = await signer.sign(body, signer.secret, nowSeconds());
    const signature = headers['webhook-signature']!;
    const check = (value: string) => () =>
      verifyRequest(
        request(body, { ...headers, 'webhook-signature': value }),
        { scheme: 'standard-webhooks' },
        signer.secret,
      );
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(check(signature)).not.toThrow();
    expect(check(signature.replace(/=$/, ''))).toThrow(/match/);
    expect(check(`${signature},x`)).toThrow(/match/);
    expect(check(signature.replace('v1,', 'v2,'))).toThrow(/match/);
  });
});
