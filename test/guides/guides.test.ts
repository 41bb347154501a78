import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { nowSeconds, SIGNERS } from '../support/signers.js';
import { FAKE_ANTHROPIC_KEY } from '../support/fake-anthropic-server.js';
import { chatCompletion, fakeReplyTo, toolCallsAnswer } from '../support/fake-ai-server.js';
import {
  useFakeAnthropic,
  useFakeChats,
  useFixture,
  useReplyReceiver,
  useTestApp,
} from '../support/harness.js';
import { ToolEndpoint } from '../support/tool-servers.js';
import {
  canRunGuides,
  guideBlocks,
  guideJsonBlocks,
  failedApiCalls,
  GUIDES_NOT_RUN,
  jsonObjects,
  runGuide,
  statusesOf,
  type GuideRun,
  type GuideRunOptions,
} from './guide-runner.js';

// The task guides (docs/guides/*.md) whose commands talk only to hookprompt's HTTP API, run as
// a reader runs them: every ```sh block of the page in order, the page's variables set to this
// test's app, key and channel, fakes standing in for Slack, Anthropic and a local model.

if (!canRunGuides) {
  console.warn(`hookprompt: ${GUIDES_NOT_RUN}`);
  it.skip(GUIDES_NOT_RUN, () => undefined);
}

const chats = useFakeChats();
const shop = useFixture(() => ToolEndpoint.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const receiver = useReplyReceiver();
const anthropic = useFakeAnthropic();
const { app, driver, ai } = useTestApp({
  ai: true,
  env: () => ({
    ...chats.env,
    // the fakes, the receiver and the "local model" listen on loopback
    ALLOW_PRIVATE_NETWORK: 'true',
    AI_MAX_ATTEMPTS: '1',
  }),
});

let apiKey: string;
let channel: ChannelJson;
const SLACK_PLACEHOLDER = 'https://hooks.slack.com/services/…';

beforeAll(async () => {
  const created = await driver.api('post', '/api-keys').send({ name: 'Guides' }).expect(201);
  apiKey = created.body.key as string;
});

afterEach(async () => {
  await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
});

/** Everything a worker process does in the background, once (tests drive the workers). */
async function workersOnce(): Promise<void> {
  await app.ctx.worker?.runOnce();
  await app.ctx.trialWorker?.runOnce();
  await app.ctx.deliveryWorker?.runOnce();
  await app.ctx.alertsEvaluator?.runOnce();
}

/**
 * Runs a page on the test's channel, with the variables every page sets; every API call of the
 * page must succeed (the refusals a page shows are webhooks').
 */
async function run(
  page: string,
  options: Omit<GuideRunOptions, 'variables'> & { variables?: Record<string, string> } = {},
): Promise<GuideRun> {
  const result = await runGuide(page, {
    meanwhile: workersOnce,
    ...options,
    variables: {
      HOOKPROMPT: app.baseUrl,
      API_KEY: apiKey,
      ...(guideBlocks(page)[0]?.text.includes('CHANNEL_ID=') ? { CHANNEL_ID: channel.id } : {}),
      ...options.variables,
    },
  });
  expect(failedApiCalls(result)).toEqual([]);
  return result;
}

const api = (path: string) => driver.api('get', path);

describe.skipIf(!canRunGuides)('the task guides, run as a reader runs them', () => {
  // each page on a channel of its own, as a reader starts from one
  beforeEach(async () => {
    channel = await driver.createChannel({ name: 'Guide', template: 'Order {{order.id}}' });
  });

  it('budgets-and-cost: sets a budget, reads the spend, prices a model', async () => {
    const result = await run('budgets-and-cost.md');

    expect(result.calls.length).toBeGreaterThanOrEqual(6);
    for (const call of result.calls) expect(call.status).toBe(200);
    // the second command shows the budget just set, the spend and when it starts again
    expect(result.printed(1)).toContain('"monthly_budget_usd": 20,');
    const workspace = (await api('/workspace').expect(200)).body as Record<string, unknown>;
    expect(workspace).toMatchObject({ monthly_budget_usd: 20, spent_usd: expect.any(Number) });
    expect(workspace.budget_resets_at).toEqual(expect.any(String));
    const prices = (await api('/prices').expect(200)).body.data as Record<string, unknown>[];
    expect(prices).toContainEqual(
      expect.objectContaining({ model: 'llama3.2', input_per_mtok: 0, output_per_mtok: 0 }),
    );
  });

  it('getting-the-reply-back: waits for a reply, fetches one, sets a reply URL and a Slack destination', async () => {
    const slackHook = chats.webhookUrl('slack-webhook', 'replies');
    const result = await run('getting-the-reply-back.md', {
      replace: [
        ['https://receiver.example.com/hookprompt-replies', receiver.url('/hookprompt-replies')],
        [SLACK_PLACEHOLDER, slackHook],
      ],
      keep: ['EVENT_ID', 'WEBHOOK_URL'],
    });

    expect(result.vars.WEBHOOK_URL).toBe(channel.webhook_url);
    for (const call of result.calls) expect(call.status).toBe(200);
    // 1. the wait, 2. the later fetch: both the reply
    const [waited, fetched] = jsonObjects(result.printed(1)).filter((answer) => answer.status);
    expect(waited).toMatchObject({ status: 'replied', reply: fakeReplyTo('Order 1042') });
    expect(fetched).toMatchObject({
      status: 'replied',
      event_id: result.vars.EVENT_ID,
      reply: fakeReplyTo('Order 1043'),
    });
    expect(result.printed(1)).toMatch(/\{"secret":"whsec_/);

    // what the page set up: every finished event goes to the receiver and into Slack
    const sent = await driver.sendEvent(channel.webhook_url, { order: { id: 1044 } });
    expect(sent.status).toBe(200);
    const deliveredTo = (id: unknown) => receiver.messages.find((m) => m.json.data.id === id);
    const postedInSlack = () =>
      chats.of('slack-webhook').find((m) => m.text.startsWith('Order 1044'));
    await eventually(async () => {
      await workersOnce();
      return deliveredTo(sent.body.event_id) !== undefined && postedInSlack() !== undefined;
    });
    expect(deliveredTo(sent.body.event_id)?.json.type).toBe('event.replied');
    expect(postedInSlack()?.text).toBe(`Order 1044: ${fakeReplyTo('Order 1044')}`);
  });

  it('securing-a-channel: asks for a signature and an address, and refuses an unsigned request', async () => {
    const result = await run('securing-a-channel.md');

    expect(statusesOf(result, 'PATCH', /\/api\/v1\/channels\/\d+$/)).toEqual([200, 200]);
    // the test sends from 127.0.0.1, outside GitHub's addresses
    expect(statusesOf(result, 'POST', /^\/hooks\//)).toEqual([403]);
    expect(jsonObjects(result.printed(1)).at(-1)).toMatchObject({ code: 'sender_not_allowed' });
    const settings = (await api(`/channels/${channel.id}`).expect(200)).body;
    expect(settings).toMatchObject({
      verification: { scheme: 'github', secret_set: true },
      allowed_ips: ['192.30.252.0/22', '2606:50c0::/32'],
    });
    const events = await driver.eventsOf(channel.id);
    expect(events.at(-1)?.status).toBe('rejected');
  });

  it('alerts: creates an alert, tests it, sees a rejections alert fire, then removes them', async () => {
    const slackHook = chats.webhookUrl('slack-webhook', 'alerts');
    const before = chats.of('slack-webhook').length;
    const result = await run('alerts.md', {
      replace: [[SLACK_PLACEHOLDER, slackHook]],
      keep: ['ALERT_ID', 'REJECTIONS_ID'],
    });

    expect(statusesOf(result, 'POST', /^\/api\/v1\/alerts$/)).toEqual([201, 201]);
    expect(jsonObjects(result.printed(2))).toEqual([{ ok: true }]);
    expect(statusesOf(result, 'POST', /^\/hooks\//)).toEqual([415]);
    const fired = jsonObjects(result.printed(3)).at(-1);
    expect(fired).toMatchObject({ state: 'firing', last_value: 1 });
    expect(statusesOf(result, 'PATCH', /^\/api\/v1\/alerts\/\d+$/)).toEqual([200]);
    expect(statusesOf(result, 'DELETE', /^\/api\/v1\/alerts\/\d+$/)).toEqual([204, 204]);
    await api(`/alerts/${result.vars.ALERT_ID}`).expect(404);
    await api(`/alerts/${result.vars.REJECTIONS_ID}`).expect(404);
    // Slack got the test and the rejections alert's firing
    const texts = chats
      .of('slack-webhook')
      .slice(before)
      .map((message) => message.text);
    expect(texts).toEqual([
      expect.stringContaining('[test]'),
      expect.stringContaining('"Refused requests" is firing'),
    ]);
  });

  it('prompt-versions-and-trials: tries a candidate on recent events, promotes it, restores version 1', async () => {
    for (const id of [1, 2]) {
      expect((await driver.sendEvent(channel.webhook_url, { order: { id } })).status).toBe(200);
    }
    await workersOnce();
    ai.defaultReply = { body: chatCompletion('{"answer": "yes"}') };
    const result = await run('prompt-versions-and-trials.md', {
      keep: ['TRIAL_ID'],
    });

    // the trial of step 1, and the one "In detail" shows
    expect(statusesOf(result, 'POST', /\/trials$/)).toEqual([202, 202]);
    expect(jsonObjects(result.printed(2))[0]).toMatchObject({
      status: 'done',
      done: 2,
      total: 2,
    });
    // each event's stored reply beside the candidate's, asked with the candidate's template
    const results = jsonObjects(result.printed(2)).slice(1);
    expect(results.map((row) => row.candidate)).toEqual([
      expect.objectContaining({ status: 'replied', prompt: 'Reply in one sentence: 2' }),
      expect.objectContaining({ status: 'replied', prompt: 'Reply in one sentence: 1' }),
    ]);
    expect(results.map((row) => row.current)).toEqual([
      expect.objectContaining({ status: 'replied', reply: fakeReplyTo('Order 2') }),
      expect.objectContaining({ status: 'replied', reply: fakeReplyTo('Order 1') }),
    ]);
    expect(statusesOf(result, 'POST', /\/promote$/)).toEqual([200]);
    expect(statusesOf(result, 'POST', /\/versions\/1\/restore$/)).toEqual([200]);
    const versions = (await api(`/channels/${channel.id}/versions`).expect(200)).body
      .data as Record<string, unknown>[];
    // 1, the promoted candidate as 2, version 1 again as 3
    expect(versions.map((version) => version.version)).toEqual([3, 2, 1]);
    expect(versions[1]).toMatchObject({ template: 'Reply in one sentence: {{order.id}}' });
    expect(versions[0]).toMatchObject({ template: 'Order {{order.id}}' });
    // the trial "In detail" starts ends here, not during the next page
    await eventually(async () => {
      await workersOnce();
      const { rows } = await app.ctx.db.query<{ running: number }>(
        `select count(*)::int as running from trials where status = 'running'`,
      );
      return rows[0]?.running === 0;
    });
  });

  it('local-model: a workspace provider on the model server, tested, priced and used by the channel', async () => {
    const result = await run('local-model.md', {
      // the fake OpenAI-compatible server stands in for Ollama
      replace: [['"base_url": "http://localhost:11434/v1"', `"base_url": "${ai.baseUrl}"`]],
      keep: ['PROVIDER_ID'],
    });

    expect(statusesOf(result, 'POST', /^\/api\/v1\/providers$/)).toEqual([201]);
    const provider = await api(`/providers/${result.vars.PROVIDER_ID}`).expect(200);
    expect(provider.body).toMatchObject({ name: 'ollama', kind: 'openai', base_url: ai.baseUrl });
    expect(jsonObjects(result.printed(4))[0]).toMatchObject({ ok: true, model: 'llama3.2' });
    expect(statusesOf(result, 'PUT', /\/prices\/llama3\.2$/)).toEqual([200]);
    expect(statusesOf(result, 'PATCH', /\/channels\/\d+$/)).toEqual([200]);
    const answer = jsonObjects(result.printed(5)).at(-1) ?? {};
    expect(answer).toMatchObject({ status: 'replied', reply: fakeReplyTo('Order 1042') });
    // the model was asked for llama3.2: the provider test, then the event
    const asked = ai.requests.filter(
      (request) => (request.body as { model: string }).model === 'llama3.2',
    );
    expect(asked).toHaveLength(2);
    expect(asked[1]?.prompt).toBe('Order 1042');
    const event = (await api(`/events/${answer.event_id as string}`).expect(200)).body;
    expect(event).toMatchObject({ model: 'llama3.2', cost_usd: 0 });
  });

  it('chat-bots: makes both bots from the saved JSON, registers Telegram, and each answers', async () => {
    const [telegramBot = '', slackBot = ''] = guideJsonBlocks('chat-bots.md');
    const token = '123456:ABC-your-bot-token';
    chats.telegramTokens.add(token);
    chats.slackTokens.add('xoxb-your-bot-token');
    const result = await run('chat-bots.md', {
      variables: { TELEGRAM_BOT_TOKEN: token },
      files: { 'telegram-bot.json': telegramBot, 'slack-bot.json': slackBot },
      replace: [['https://api.telegram.org', chats.env.TELEGRAM_API_URL as string]],
      keep: ['WEBHOOK_URL'],
    });

    expect(statusesOf(result, 'POST', /^\/api\/v1\/channels$/)).toEqual([201, 201]);
    const slackUrl = result.printed(3).trim();
    const bots = (await api('/channels').expect(200)).body.data as ChannelJson[];
    const urlOf = (name: string) => bots.find((bot) => bot.name === name)?.webhook_url;
    expect([urlOf('Telegram bot'), urlOf('Slack bot')]).toEqual([
      result.vars.WEBHOOK_URL,
      slackUrl,
    ]);
    // Telegram now sends each message where the page told it to, with the page's secret
    const hook = chats.telegramWebhooks.get(token);
    expect(hook).toEqual({ url: result.vars.WEBHOOK_URL, secret_token: 'a-long-random-string' });
    const sent = await driver.sendEvent(
      hook?.url ?? '',
      {
        update_id: 1,
        message: {
          message_id: 7,
          from: { id: 9, is_bot: false },
          chat: { id: 555 },
          text: 'Hi bot',
        },
      },
      { headers: { 'X-Telegram-Bot-Api-Secret-Token': hook?.secret_token ?? '' } },
    );
    expect(sent.status).toBe(200);
    await eventually(async () => {
      await workersOnce();
      return chats.of('telegram').some((message) => message.to === '555');
    });
    expect(chats.of('telegram').find((message) => message.to === '555')).toMatchObject({
      thread: '7',
      text: fakeReplyTo('Hi bot'),
    });
    // Slack's check of the Request URL passes at once
    const slack = SIGNERS.find((signer) => signer.scheme === 'slack');
    const handshake = JSON.stringify({ type: 'url_verification', challenge: 'c-7' });
    const headers = await slack?.sign(handshake, "the app's signing secret", nowSeconds());
    const answer = await driver.sendEvent(slackUrl, handshake, { headers });
    expect(answer.body).toEqual({ challenge: 'c-7' });
  });

  it('support-tickets-with-tools: looks the order up, waits for an approval, refunds once, replies', async () => {
    const order = { order_id: '1042', items: [{ name: 'Mug', price_usd: 12 }], total_usd: 12 };
    shop.answer = { status: 200, body: order };
    const refund = { order_id: '1042', amount_usd: 12, reason: 'The mug arrived broken' };
    ai.enqueue(
      toolCallsAnswer(['lookup_order', JSON.stringify({ order_id: '1042' })]),
      toolCallsAnswer(['issue_refund', JSON.stringify(refund)]),
      {
        body: chatCompletion('Sorry about the mug: $12 is on its way back to you.'),
      },
    );
    const result = await run('support-tickets-with-tools.md', {
      variables: {
        SHOP_API: `${shop.baseUrl}/api`,
        SHOP_TOKEN: 'shop-token-7781',
        HELPDESK_URL: receiver.url('/helpdesk'),
      },
      keep: ['EVENT_ID'],
    });

    expect(statusesOf(result, 'POST', /^\/api\/v1\/tools$/)).toEqual([201, 201]);
    expect(jsonObjects(result.printed(2))).toEqual([{ name: 'issue_refund', approval: 'always' }]);
    expect(jsonObjects(result.printed(3))[0]).toMatchObject({ ok: true, http_status: 200 });
    // it waited, showing the call it would make, the lookup made
    const waiting = jsonObjects(result.printed(6)).at(-1);
    expect(waiting).toMatchObject({
      status: 'awaiting_approval',
      approval: { tool: 'issue_refund' },
      tool_calls: [
        { tool: 'lookup_order', status: 'ok' },
        { tool: 'issue_refund', status: 'awaiting_approval' },
      ],
    });
    expect(JSON.stringify(waiting?.approval)).toContain('The mug arrived broken');
    expect(jsonObjects(result.printed(7))).toEqual([{ status: 'pending' }]);
    const done = jsonObjects(result.printed(8)).at(-1);
    expect(done).toMatchObject({
      status: 'replied',
      reply: 'Sorry about the mug: $12 is on its way back to you.',
      tool_calls: [
        { tool: 'lookup_order', status: 'ok' },
        { tool: 'issue_refund', status: 'ok' },
      ],
    });
    // the shop saw one lookup and one refund, each with the token; the helpdesk got the reply
    const asked = shop.requests.map((request) => [request.method, request.url]);
    expect(asked).toEqual([
      ['GET', '/api/orders/1042'],
      ['GET', '/api/orders/1042'],
      ['POST', '/api/refunds'],
    ]);
    expect(shop.requests.every((r) => r.headers.authorization === 'Bearer shop-token-7781')).toBe(
      true,
    );
    expect(JSON.parse(shop.requests.at(-1)?.body ?? '{}')).toEqual(refund);
    const delivered = receiver.messages.find((m) => m.json.data.id === result.vars.EVENT_ID);
    expect(delivered?.json.data.reply).toBe('Sorry about the mug: $12 is on its way back to you.');
  });

  it('anthropic-with-fallback: Anthropic overloaded, the OpenAI fallback answers, each call priced', async () => {
    // the provider test passes; the event's call finds Anthropic overloaded
    anthropic.enqueue({}, { status: 529 });
    const result = await run('anthropic-with-fallback.md', {
      replace: [
        [
          '"api_key": "sk-ant-..."',
          `"api_key": "${FAKE_ANTHROPIC_KEY}", "base_url": "${anthropic.baseUrl}"`,
        ],
        ['"api_key": "sk-..."', `"api_key": "sk-...", "base_url": "${ai.baseUrl}"`],
      ],
    });

    expect(statusesOf(result, 'POST', /^\/api\/v1\/providers$/)).toEqual([201, 201]);
    expect(jsonObjects(result.printed(2))).toEqual([
      expect.objectContaining({ ok: true, model: 'claude-sonnet-4-5' }),
      expect.objectContaining({ ok: true, model: 'gpt-4o-mini' }),
    ]);
    expect(statusesOf(result, 'PATCH', /\/channels\/\d+$/)).toEqual([200]);
    expect(statusesOf(result, 'PUT', /\/prices\/claude-sonnet-4-5$/)).toEqual([200]);
    const event = jsonObjects(result.printed(5))[0];
    expect(event).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(event?.calls).toEqual([
      expect.objectContaining({ provider: 'anthropic', model: 'claude-sonnet-4-5' }),
      expect.objectContaining({
        provider: 'openai',
        model: 'gpt-4o-mini',
        cost_usd: expect.any(Number),
      }),
    ]);
  });
});
