import { describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { useFakeAi, useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';
import { databaseDump, foundIn, secretForms } from './secret-forms.js';

const receiver = useReplyReceiver();
// The providers a workspace adds (the test of provider keys): an Anthropic one with a key of
// its own, and an OpenAI-compatible one.
const anthropic = useFixture(
  () => FakeAnthropicServer.start('sk-ant-dump-check-5d8e1f0a9b7c6d4e3f2a'),
  { reset: (fake) => fake.reset(), stop: (fake) => fake.close() },
);
const openai = useFakeAi();
const { app, driver } = useTestApp({
  env: { DELIVERY_ALLOW_PRIVATE: 'true', PROVIDERS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'trace' },
});

/** A channel checking `signer`'s signatures, replying to the receiver; its reply secret. */
async function signedChannel(signer: (typeof SIGNERS)[number]) {
  const channel = await driver.createChannel({
    name: signer.scheme,
    verification: { ...signer.verification, secret: signer.secret },
    reply_delivery: { url: receiver.url(`/${signer.scheme}`) },
  });
  const res = await driver.api('get', `/channels/${channel.id}/reply-secret`).expect(200);
  return { channel, replySecret: res.body.secret as string };
}

async function sendSigned(channel: ChannelJson, signer: (typeof SIGNERS)[number], secret: string) {
  const body = JSON.stringify({ order: { id: signer.scheme } });
  const headers = await signer.sign(body, secret, nowSeconds());
  return driver.sendEvent(channel.webhook_url, body, { headers });
}

/** Lets the worker answer and the delivery worker send until the receiver has `count` messages. */
async function deliveredMessages(count: number) {
  return eventually(
    async () => {
      await app.ctx.worker?.runOnce();
      await app.ctx.deliveryWorker?.runOnce();
      return receiver.messages.length >= count ? receiver.messages.slice(0, count) : undefined;
    },
    { what: `${count} reply messages` },
  );
}

describe('secrets at rest', () => {
  it('a dump of the database holds no sender or reply secret in any encoding, and all still sign and verify', async () => {
    const channels = [];
    for (const signer of SIGNERS) channels.push({ signer, ...(await signedChannel(signer)) });

    // Senders sign with their own libraries; the receiver checks with the secrets it stored.
    for (const { channel, signer } of channels) {
      expect((await sendSigned(channel, signer, signer.secret)).status, signer.scheme).toBe(200);
      expect((await sendSigned(channel, signer, signer.otherSecret)).status).toBe(401);
    }
    // The replies are signed with each channel's reply secret, as the reference library checks.
    receiver.secrets = channels.map((c) => c.replySecret);
    const messages = await deliveredMessages(channels.length);
    for (const { signer, replySecret } of channels) {
      const message = messages.find((m) => m.path === `/${signer.scheme}`);
      expect(message?.verifiedWith, signer.scheme).toEqual([replySecret]);
    }

    // A rotated reply secret: both the new one and the one it replaced sign, and are stored.
    const rotating = channels[0] as (typeof channels)[number];
    const rotated = await driver
      .api('post', `/channels/${rotating.channel.id}/reply-secret/rotate`)
      .expect(200);
    const newReplySecret = rotated.body.secret as string;
    receiver.messages.length = 0;
    receiver.secrets = [newReplySecret, rotating.replySecret];
    expect(
      (await sendSigned(rotating.channel, rotating.signer, rotating.signer.secret)).status,
    ).toBe(200);
    const [message] = await deliveredMessages(1);
    expect(message?.verifiedWith).toEqual([newReplySecret, rotating.replySecret]);

    // The workspace's alert secret, which signs alert notifications.
    const alertSecret = (await driver.api('get', '/alerts/secret').expect(200)).body
      .secret as string;
    // Destinations' tokens and secret URLs.
    const destinationSecrets = {
      bot: '987654:DUMP-CHECK-TELEGRAM-TOKEN',
      slack: 'xoxb-dump-check-1f2e3d4c5b6a',
      hook: 'https://8.8.8.8/services/T0/B0/DUMPCHECKHOOKSECRET',
    };
    await driver.createChannel({
      destinations: [
        { kind: 'telegram', bot_token: destinationSecrets.bot, chat_id: '42' },
        { kind: 'slack', token: destinationSecrets.slack, channel: 'C0' },
        { kind: 'discord', webhook_url: destinationSecrets.hook },
      ],
    });
    const secrets = [
      ...channels.flatMap((c) => [c.signer.secret, c.replySecret]),
      newReplySecret,
      alertSecret,
      ...Object.values(destinationSecrets),
    ];
    const dump = await databaseDump(app.database.db, app.database.url);
    for (const secret of secrets) expect(foundIn(dump, secret), secret).toEqual([]);
    // The search finds every form it looks for.
    for (const form of secretForms(newReplySecret))
      expect(foundIn(`…${form}…`, newReplySecret)).toContain(form);

    const { rows } = await app.ctx.db.query<Record<string, string | null>>(
      `select verification_secret, reply_secret, reply_previous_secret from channels
       where id = any($1::bigint[])`,
      [channels.map((c) => c.channel.id)],
    );
    const stored = rows.flatMap((row) => Object.values(row)).filter((v) => v !== null);
    expect(stored).toHaveLength(channels.length * 2 + 1);
    for (const value of stored) expect(value).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);

    // Neither the secrets nor the key that seals them are in the log, even at trace level.
    const key = app.database.secretsKey;
    for (const secret of [...secrets, key, Buffer.from(key, 'hex').toString('base64')])
      expect(foundIn(app.logText(), secret), secret).toEqual([]);
  });

  it('a dump holds no provider API key, and each key still reaches its provider', async () => {
    const keys = { claude: anthropic.apiKey, backup: 'sk-proj-dump-check-0f1e2d3c4b5a69788796' };
    const added = [
      { name: 'claude', kind: 'anthropic', base_url: anthropic.baseUrl, api_key: keys.claude },
      { name: 'backup', kind: 'openai', base_url: openai.baseUrl, api_key: keys.backup },
    ];
    for (const provider of added) {
      const res = await driver.api('post', '/providers').send(provider);
      expect(res.status, res.text).toBe(201);
      // A real call with the key as stored: the fakes check it as the real APIs do.
      const test = await driver
        .api('post', `/providers/${String(res.body.id)}/test`)
        .send({ model: 'm' })
        .expect(200);
      expect(test.body, provider.name).toMatchObject({ ok: true });
    }
    expect(openai.requests[0]?.headers.authorization).toBe(`Bearer ${keys.backup}`);

    const dump = await databaseDump(app.database.db, app.database.url);
    for (const key of Object.values(keys)) expect(foundIn(dump, key), key).toEqual([]);
    const { rows } = await app.ctx.db.query<{ api_key: string }>(
      `select api_key from providers where name = any($1::text[])`,
      [Object.keys(keys)],
    );
    expect(rows).toHaveLength(2);
    for (const { api_key } of rows) expect(api_key).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    for (const key of Object.values(keys)) expect(foundIn(app.logText(), key), key).toEqual([]);
  });

  it('a dump holds no webhook token; the webhook URL the API shows, made anew, is the one that receives', async () => {
    const tokenOf = (url: string) => new URL(url).pathname.split('/').pop() as string;
    const channel = await driver.createChannel();
    const regenerated = await driver
      .api('post', `/channels/${channel.id}/regenerate-url`)
      .expect(200);
    const listed = await driver.api('get', '/channels').expect(200);
    const shown = (listed.body.data as ChannelJson[]).find((c) => c.id === channel.id);
    expect(shown?.webhook_url).toBe(regenerated.body.webhook_url);
    const [before, after] = [channel.webhook_url, regenerated.body.webhook_url as string];
    expect((await driver.sendEvent(before, { order: { id: 1 } })).status).toBe(404);
    expect((await driver.sendEvent(after, { order: { id: 2 } })).status).toBe(200);

    const dump = await databaseDump(app.database.db, app.database.url);
    for (const token of [tokenOf(before), tokenOf(after)])
      expect(foundIn(dump, token), token).toEqual([]);
    const { rows } = await app.ctx.db.query<{ webhook_token: string }>(
      'select webhook_token from channels where id = $1',
      [channel.id],
    );
    expect(rows[0]?.webhook_token).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
  });

  it('a dump holds neither the password nor the query values of a reply, destination or alert URL; the API reads them back without the password, and messages still carry them', async () => {
    receiver.messages.length = 0;
    const withUser = (url: string, userinfo: string) =>
      url.replace('http://', `http://${userinfo}@`);
    const secrets = {
      replyPassword: 'Reply-Pass-9f8e7d6c',
      replyQuery: 'reply-query-0a1b2c3d',
      hookPassword: 'Hook-Pass-5e4d3c2b1a',
      hookSig: 'hook-sig-7a6b5c4d3e',
      alertPassword: 'Alert-Pass-3f2e1d0c',
      alertKey: 'alert-key-1c2d3e4f5a',
    };
    const replyUrl = withUser(
      receiver.url(`/reply?token=${secrets.replyQuery}`),
      `replier:${secrets.replyPassword}`,
    );
    const hookUrl = withUser(
      receiver.url(`/hook?sig=${secrets.hookSig}`),
      `hooker:${secrets.hookPassword}`,
    );
    const plainUrl = receiver.url('/plain');
    const alertUrl = withUser(
      receiver.url(`/alert?key=${secrets.alertKey}`),
      `alerter:${secrets.alertPassword}`,
    );
    const channel = await driver.createChannel({
      reply_delivery: { url: replyUrl },
      destinations: [
        { kind: 'webhook', url: hookUrl },
        { kind: 'webhook', url: plainUrl },
      ],
    });
    const alert = await driver
      .api('post', '/alerts')
      .send({
        name: 'queue',
        condition: { type: 'queue_age', seconds: 600 },
        notify: { kind: 'webhook', url: alertUrl },
      })
      .expect(201);

    // Read back without the password, the query as given; a URL without either as it is.
    const shown = {
      reply: withUser(receiver.url(`/reply?token=${secrets.replyQuery}`), 'replier'),
      hook: withUser(receiver.url(`/hook?sig=${secrets.hookSig}`), 'hooker'),
      alert: withUser(receiver.url(`/alert?key=${secrets.alertKey}`), 'alerter'),
    };
    const read = (await driver.api('get', `/channels/${channel.id}`).expect(200)).body as {
      reply_delivery: { url: string };
      destinations: Record<string, unknown>[];
    };
    expect(read.reply_delivery.url).toBe(shown.reply);
    expect(read.destinations.map((d) => d.url)).toEqual([shown.hook, plainUrl]);
    expect((alert.body as { notify: { url: string } }).notify.url).toBe(shown.alert);

    // Sent back as read (a form saved again), each keeps its password.
    await driver
      .api('patch', `/channels/${channel.id}`)
      .send({ reply_delivery: { url: shown.reply }, destinations: read.destinations })
      .expect(200);
    await driver
      .api('patch', `/alerts/${String(alert.body.id)}`)
      .send({ notify: (alert.body as { notify: unknown }).notify })
      .expect(200);

    // The webhook URL shown still receives; the messages carry the credentials and queries.
    expect((await driver.sendEvent(channel.webhook_url, { order: { id: 'urls' } })).status).toBe(
      200,
    );
    const messages = await deliveredMessages(3);
    const basic = (userinfo: string) => `Basic ${Buffer.from(userinfo).toString('base64')}`;
    const byPath = (path: string) => messages.find((m) => m.path.startsWith(path));
    expect(byPath('/reply')?.path).toBe(`/reply?token=${secrets.replyQuery}`);
    expect(byPath('/reply')?.headers.authorization).toBe(basic(`replier:${secrets.replyPassword}`));
    expect(byPath('/hook')?.path).toBe(`/hook?sig=${secrets.hookSig}`);
    expect(byPath('/hook')?.headers.authorization).toBe(basic(`hooker:${secrets.hookPassword}`));
    expect(byPath('/plain')?.headers.authorization).toBeUndefined();

    const dump = await databaseDump(app.database.db, app.database.url);
    for (const secret of Object.values(secrets)) expect(foundIn(dump, secret), secret).toEqual([]);
    const { rows } = await app.ctx.db.query<Record<string, string>>(
      `select r.url as reply_url, d.url as hook_url, a.notify_url
       from channels c join destinations d on d.channel_id = c.id and d.position = 0
            join destinations r on r.channel_id = c.id and r.role = 'reply_url',
            alerts a
       where c.id = $1 and a.id = $2`,
      [channel.id, alert.body.id],
    );
    expect(rows).toHaveLength(1);
    const stored = rows[0] as Record<string, string>;
    for (const value of Object.values(stored)) expect(value).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    const open = (value: string | undefined) => app.ctx.secrets.open(value ?? '');
    expect(open(stored.reply_url)).toBe(replyUrl);
    expect(open(stored.hook_url)).toBe(hookUrl);
    expect(open(stored.notify_url)).toBe(alertUrl);
    const plain = await app.ctx.db.query<{ url: string }>(
      `select url from destinations where channel_id = $1 and position = 1`,
      [channel.id],
    );
    expect(plain.rows[0]?.url).toBe(plainUrl);
    for (const secret of Object.values(secrets))
      expect(foundIn(app.logText(), secret), secret).toEqual([]);
  });

  it('seals a value anew each time: the same secret is never stored twice alike', async () => {
    const signer = SIGNERS.find((s) => s.scheme === 'github') as (typeof SIGNERS)[number];
    const a = await signedChannel(signer);
    const b = await signedChannel(signer);
    const { rows } = await app.ctx.db.query<{ verification_secret: string }>(
      'select verification_secret from channels where id = any($1::bigint[]) order by id',
      [[a.channel.id, b.channel.id]],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]?.verification_secret).not.toBe(rows[1]?.verification_secret);
    for (const { channel } of [a, b])
      expect((await sendSigned(channel, signer, signer.secret)).status).toBe(200);
  });
});
