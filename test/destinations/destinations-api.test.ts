import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();

type Destination = Record<string, unknown> & { id: string };

const telegram = {
  kind: 'telegram',
  bot_token: '123456:TELEGRAM-SECRET-TOKEN',
  chat_id: '{{message.chat.id}}',
  reply_to: '{{message.message_id}}',
};
const slackHook = {
  kind: 'slack',
  webhook_url: 'https://8.8.8.8/services/T0/B0/SLACKSECRET',
};

describe('channel destinations', () => {
  it('are created with defaults, and read back with their secrets only as token_set / url_set', async () => {
    const channel = await driver.createChannel({ destinations: [telegram, slackHook] });
    const read = await driver.api('get', `/channels/${channel.id}`);
    expect(read.status).toBe(200);
    const [first, second] = read.body.destinations as Destination[];
    expect(first).toEqual({
      id: expect.stringMatching(/^\d+$/),
      kind: 'telegram',
      enabled: true,
      when: [{ path: 'status', op: 'eq', value: 'replied' }],
      message: '{{reply}}',
      token_set: true,
      chat_id: '{{message.chat.id}}',
      reply_to: '{{message.message_id}}',
    });
    expect(second).toMatchObject({ kind: 'slack', url_set: true, channel: null });
    expect(JSON.stringify(read.body)).not.toMatch(/TELEGRAM-SECRET|SLACKSECRET/);

    const { rows } = await app.ctx.db.query<{ secret: string }>(
      'select secret from destinations where channel_id = $1',
      [channel.id],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.secret).toMatch(/^enc:v1:/);
    expect(app.logText()).not.toMatch(/TELEGRAM-SECRET|SLACKSECRET/);
  });

  it('a PATCH replaces the list; an entry sent back with its id and no secret keeps it', async () => {
    const channel = await driver.createChannel({ destinations: [telegram, slackHook] });
    const [kept] = (await driver.api('get', `/channels/${channel.id}`)).body
      .destinations as Destination[];
    const res = await driver.updateChannel(channel.id, {
      destinations: [
        { ...kept, chat_id: '42', when: [{ path: 'json.severity', op: 'eq', value: 'high' }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.destinations).toEqual([
      expect.objectContaining({
        id: kept?.id,
        chat_id: '42',
        token_set: true,
        when: [{ path: 'json.severity', op: 'eq', value: 'high' }],
      }),
    ]);
    const sending = await app.ctx.destinations.forSending([kept?.id as string]);
    expect(sending.get(kept?.id as string)?.settings.secret).toBe(telegram.bot_token);
  });

  it('refuses a missing secret, more than five, a bad when, an unknown id and a private URL', async () => {
    const channel = await driver.createChannel();
    const refusals = [
      { destinations: [{ kind: 'telegram', chat_id: '1' }], path: 'destinations.0' },
      { destinations: Array.from({ length: 6 }, () => slackHook), path: 'destinations' },
      {
        destinations: [{ ...slackHook, when: [{ path: 'reply', op: 'eq', value: 'x' }] }],
        path: 'destinations.0.when.0.path',
      },
      { destinations: [{ ...slackHook, id: '999999' }], path: 'destinations.0.id' },
      {
        destinations: [{ kind: 'webhook', url: 'http://127.0.0.1:9/hook' }],
        path: 'destinations.0.url',
      },
      { destinations: [{ kind: 'slack', token: 'xoxb-1' }], path: 'destinations.0.channel' },
    ];
    for (const { destinations, path } of refusals) {
      const res = await driver.updateChannel(channel.id, { destinations });
      expect(res.status, JSON.stringify(destinations)).toBe(400);
      expect(JSON.stringify(res.body.errors)).toContain(`"${path}"`);
    }
    const read = await driver.api('get', `/channels/${channel.id}`);
    expect(read.body.destinations).toEqual([]);
  });

  it('a webhook destination shows its URL and gives the channel a signing secret', async () => {
    const channel = await driver.createChannel({
      destinations: [{ kind: 'webhook', url: 'https://8.8.4.4/hook' }],
    });
    const read = await driver.api('get', `/channels/${channel.id}`);
    expect(read.body.destinations[0]).toMatchObject({
      kind: 'webhook',
      url: 'https://8.8.4.4/hook',
    });
    const secret = await driver.api('get', `/channels/${channel.id}/reply-secret`);
    expect(secret.body.secret).toMatch(/^whsec_/);
  });

  it('the reply URL is none of the five: five more beside it, kept when the list is replaced', async () => {
    const replyDelivery = { url: 'https://8.8.4.4/replies', enabled: true, disabled_reason: null };
    const channel = await driver.createChannel({
      reply_delivery: { url: replyDelivery.url },
      destinations: Array.from({ length: 5 }, () => slackHook),
    });
    const created = await driver.api('get', `/channels/${channel.id}`);
    expect(created.body.reply_delivery).toEqual(replyDelivery);
    expect(created.body.destinations).toHaveLength(5);

    // Its row cannot be sent as an entry of the list, and replacing the list leaves it.
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `select id from destinations where channel_id = $1 and role = 'reply_url'`,
      [channel.id],
    );
    const taken = await driver.updateChannel(channel.id, {
      destinations: [{ ...slackHook, id: rows[0]?.id }],
    });
    expect(taken.status).toBe(400);
    expect(JSON.stringify(taken.body.errors)).toContain('"destinations.0.id"');
    const emptied = await driver.updateChannel(channel.id, { destinations: [] });
    expect(emptied.status).toBe(200);
    expect(emptied.body.destinations).toEqual([]);
    expect(emptied.body.reply_delivery).toEqual(replyDelivery);
  });
});
