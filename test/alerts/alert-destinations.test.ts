import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';
import { useFakeChats, useTestApp } from '../support/harness.js';

const chats = useFakeChats();
const { app, driver } = useTestApp({
  env: () => ({ ...chats.env, DELIVERY_ALLOW_PRIVATE: 'true' }),
});
let evaluator: AlertsEvaluator;

const BOT_TOKEN = '123456:alerts-bot-token';

beforeAll(() => {
  evaluator = app.ctx.alertsEvaluator as AlertsEvaluator;
  chats.telegramTokens.add(BOT_TOKEN);
});
beforeEach(async () => {
  chats.messages.length = 0;
  await app.ctx.db.query('delete from alerts');
  await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
});

/** A budget alert notifying `notify`, fired and cleared by the budget, evaluated each time. */
async function fireAndClear(notify: Record<string, unknown>) {
  await driver
    .api('post', '/alerts')
    .send({ name: 'Budget', condition: { type: 'budget', percent: 50 }, notify })
    .expect(201);
  await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
  await evaluator.runOnce();
  await evaluator.runOnce();
  await driver.setWorkspace({ monthly_budget_usd: 100 }).expect(200);
  await evaluator.runOnce();
  await evaluator.runOnce();
}

describe('alert notifications through the destination senders', () => {
  it('posts to a Slack Incoming Webhook once on firing and once on clearing, the message rendered', async () => {
    await fireAndClear({
      kind: 'slack',
      webhook_url: chats.webhookUrl('slack-webhook', 'alerts'),
      message: '{{alert.name}} in {{workspace.name}} is {{state}} at {{value}}%',
    });
    expect(chats.of('slack-webhook').map((m) => m.text)).toEqual([
      'Budget in Default workspace is firing at 100%',
      'Budget in Default workspace is ok at 0%',
    ]);
  });

  it('sends to Telegram with the bot token, the default message naming the alert', async () => {
    await fireAndClear({ kind: 'telegram', bot_token: BOT_TOKEN, chat_id: '-1001' });
    const sent = chats.of('telegram');
    expect(sent.map((m) => [m.to, m.text])).toEqual([
      ['-1001', 'hookprompt alert "Budget" is firing (value: 100)'],
      ['-1001', 'hookprompt alert "Budget" is ok (value: 0)'],
    ]);
    expect(app.logText()).not.toContain(BOT_TOKEN);
  });

  it('records a refusal the platform says no retry mends as failed, and shows it on the history', async () => {
    await fireAndClear({ kind: 'telegram', bot_token: '999:unknown-bot', chat_id: '-1001' });
    expect(chats.of('telegram')).toEqual([]);
    const { rows } = await app.ctx.db.query<{ notification: string; attempts: number }>(
      'select notification, attempts from alert_changes order by id',
    );
    expect(rows).toEqual([
      { notification: 'failed', attempts: 1 },
      { notification: 'failed', attempts: 1 },
    ]);
    const history = await app.ctx.alerts.history(app.ctx.defaultWorkspaceId);
    const changes = [...history.values()][0] ?? [];
    expect(changes[0]?.lastError).toMatch(/HTTP 40[13]/);
  });

  it('counts a notify that cannot be sent as a failed attempt, gives it up after six, and still sends the others', async () => {
    await driver
      .api('post', '/alerts')
      .send({
        name: 'Broken',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'telegram', bot_token: BOT_TOKEN, chat_id: '-1002' },
      })
      .expect(201);
    await driver
      .api('post', '/alerts')
      .send({
        name: 'Working',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'telegram', bot_token: BOT_TOKEN, chat_id: '-1003' },
      })
      .expect(201);
    // As if sealed under a key this server no longer has: opening it throws.
    await app.ctx.db.query(
      `update alerts set notify_secret = 'enc:v1:bm90LXNlYWxlZC1ieS1hbnkta2V5LW9mLXRoaXMtc2VydmVy' where name = 'Broken'`,
    );
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    await expect(evaluator.runOnce()).resolves.toMatchObject({ changed: 2, sent: 1 });
    expect(chats.of('telegram').map((m) => m.to)).toEqual(['-1003']);

    const broken = async () => {
      const { rows } = await app.ctx.db.query<{
        notification: string;
        attempts: number;
        last_error: string | null;
      }>(
        `select c.notification, c.attempts, c.last_error from alert_changes c
         join alerts a on a.id = c.alert_id where a.name = 'Broken'`,
      );
      return rows[0];
    };
    expect(await broken()).toMatchObject({ notification: 'pending', attempts: 1 });
    expect((await broken())?.last_error).toBeTruthy();
    for (let attempt = 2; attempt <= 7; attempt++) {
      // Due again now rather than after its back-off.
      await app.ctx.db.query(`update alert_changes set locked_until = now() - interval '1 second'`);
      await evaluator.runOnce();
    }
    expect(await broken()).toMatchObject({ notification: 'failed', attempts: 6 });
    expect(chats.of('telegram').map((m) => m.to)).toEqual(['-1003']);
  });

  it('sends a test notification to the notify target on request, and says when the platform refused it', async () => {
    const slack = await driver
      .api('post', '/alerts')
      .send({
        name: 'Budget',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'slack', webhook_url: chats.webhookUrl('slack-webhook', 'tests') },
      })
      .expect(201);
    const sent = await driver.api('post', `/alerts/${slack.body.id as string}/test`).expect(200);
    expect(sent.body).toEqual({ ok: true });
    expect(chats.of('slack-webhook').map((m) => m.text)).toEqual([
      '[test] hookprompt alert "Budget" is ok (value: )',
    ]);

    const telegram = await driver
      .api('post', '/alerts')
      .send({
        name: 'Unknown bot',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'telegram', bot_token: '999:unknown-bot-token', chat_id: '-1001' },
      })
      .expect(201);
    const refused = await driver
      .api('post', `/alerts/${telegram.body.id as string}/test`)
      .expect(200);
    expect(refused.body).toEqual({ ok: false, error: expect.stringMatching(/HTTP 40[13]/) });
    expect(refused.body.error).not.toContain('unknown-bot-token');
    expect(chats.of('telegram')).toEqual([]);
    const { rows } = await app.ctx.db.query('select id from alert_changes');
    expect(rows).toEqual([]);
  });
});
