import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';

const { driver } = useTestApp();
const slack = SIGNERS.find((signer) => signer.scheme === 'slack');

const handshake = JSON.stringify({
  token: 'legacy',
  challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
  type: 'url_verification',
});

describe("Slack's url_verification", () => {
  it('is answered with its challenge on a Slack-verified channel, and nothing is stored', async () => {
    if (!slack) throw new Error('no slack signer');
    const channel = await driver.createChannel({
      verification: { ...slack.verification, secret: slack.secret },
    });
    const headers = await slack.sign(handshake, slack.secret, nowSeconds());
    const res = await driver.sendEvent(channel.webhook_url, handshake, { headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(await driver.eventsOf(channel.id)).toEqual([]);

    const forged = await slack.sign(handshake, slack.otherSecret, nowSeconds());
    const refused = await driver.sendEvent(channel.webhook_url, handshake, { headers: forged });
    expect(refused.status).toBe(401);
    expect(refused.body).not.toHaveProperty('challenge');
  });

  it('is an ordinary payload on a channel that does not verify Slack', async () => {
    const channel = await driver.createChannel();
    const res = await driver.sendEvent(channel.webhook_url, handshake);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'received', event_id: expect.any(String) });
    expect(await driver.eventsOf(channel.id)).toHaveLength(1);
  });
});
