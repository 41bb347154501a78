import { createHmac, randomBytes } from 'node:crypto';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

const stripe = new Stripe('sk_test_not_used_for_any_call');

/** How a real sender signs a body: the headers it would send with it. */
export interface Signer {
  scheme: string;
  /** The channel's `verification`, without the secret. */
  verification: Record<string, unknown>;
  /** A secret of the shape this sender issues. */
  secret: string;
  otherSecret: string;
  /** The header a request without a signature lacks. */
  signatureHeader: string;
  /** Signs `body` with `secret`, dated `timestamp` (Unix seconds). */
  sign(body: string, secret: string, timestamp: number): Promise<Record<string, string>>;
  /** Whether the scheme signs a timestamp (and so refuses stale requests). */
  timestamped: boolean;
}

const whsec = () => `whsec_${randomBytes(24).toString('base64')}`;
const plain = () => randomBytes(16).toString('hex');
const hmacHex = (secret: string, text: string) =>
  createHmac('sha256', secret).update(text).digest('hex');

/** One signer per scheme, each from the sender's own library or, without one, its documentation. */
export const SIGNERS: Signer[] = [
  {
    scheme: 'standard-webhooks',
    verification: { scheme: 'standard-webhooks' },
    secret: whsec(),
    otherSecret: whsec(),
    signatureHeader: 'webhook-signature',
    timestamped: true,
    async sign(body, secret, timestamp) {
      const id = `msg_${randomBytes(8).toString('hex')}`;
      return {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': new Webhook(secret).sign(id, new Date(timestamp * 1000), body),
      };
    },
  },
  {
    scheme: 'stripe',
    verification: { scheme: 'stripe' },
    secret: whsec(),
    otherSecret: whsec(),
    signatureHeader: 'stripe-signature',
    timestamped: true,
    async sign(body, secret, timestamp) {
      return {
        'Stripe-Signature': stripe.webhooks.generateTestHeaderString({
          payload: body,
          secret,
          timestamp,
        }),
      };
    },
  },
  {
    scheme: 'github',
    verification: { scheme: 'github' },
    secret: plain(),
    otherSecret: plain(),
    signatureHeader: 'x-hub-signature-256',
    timestamped: false,
    async sign(body, secret) {
      return {
        'X-GitHub-Event': 'push',
        'X-GitHub-Delivery': randomBytes(8).toString('hex'),
        'X-Hub-Signature-256': await signGithub(secret, body),
      };
    },
  },
  {
    // Shopify's documentation: base64 of the HMAC-SHA256 of the raw body, keyed with the app secret.
    scheme: 'shopify',
    verification: { scheme: 'shopify' },
    secret: plain(),
    otherSecret: plain(),
    signatureHeader: 'x-shopify-hmac-sha256',
    timestamped: false,
    async sign(body, secret) {
      return {
        'X-Shopify-Hmac-Sha256': createHmac('sha256', secret).update(body).digest('base64'),
      };
    },
  },
  {
    // Slack's documentation: v0= hex HMAC-SHA256 of "v0:{timestamp}:{body}" with the signing secret.
    scheme: 'slack',
    verification: { scheme: 'slack' },
    secret: plain(),
    otherSecret: plain(),
    signatureHeader: 'x-slack-signature',
    timestamped: true,
    async sign(body, secret, timestamp) {
      return {
        'X-Slack-Request-Timestamp': String(timestamp),
        'X-Slack-Signature': `v0=${hmacHex(secret, `v0:${timestamp}:${body}`)}`,
      };
    },
  },
  {
    scheme: 'hmac-sha256',
    verification: { scheme: 'hmac-sha256', header: 'X-Signature', encoding: 'base64' },
    secret: plain(),
    otherSecret: plain(),
    signatureHeader: 'x-signature',
    timestamped: false,
    async sign(body, secret) {
      return { 'X-Signature': createHmac('sha256', secret).update(body).digest('base64') };
    },
  },
  {
    scheme: 'header-secret',
    verification: { scheme: 'header-secret', header: 'X-Webhook-Secret' },
    secret: plain(),
    otherSecret: plain(),
    signatureHeader: 'x-webhook-secret',
    timestamped: false,
    async sign(_body, secret) {
      return { 'X-Webhook-Secret': secret };
    },
  },
];

export const nowSeconds = () => Math.floor(Date.now() / 1000);
