import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import {
  chatCompletion,
  toolCallsAnswer,
  type RecordedRequest,
} from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { metricValue } from '../support/metric-value.js';
import { ToolEndpoint } from '../support/tool-servers.js';
import {
  ADMIN_ENV,
  inviteAdmin,
  unescapeHtml,
  useSignedInAdmin,
  type PanelClient,
} from '../panel/panel-client.js';
import type { AlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';

const endpoint = useFixture(() => ToolEndpoint.start(), {
  reset: (server) => server.reset(),
  stop: (server) => server.close(),
});
const { app, driver, ai } = useTestApp({
  ai: true,
  env: {
    ...ADMIN_ENV,
    TOOLS_ALLOW_PRIVATE: 'true',
    DELIVERY_ALLOW_PRIVATE: 'true',
    WORKER_RETRY_BASE_MS: '0',
  },
});
const owner = useSignedInAdmin(app);

const ORDER_SCHEMA = {
  type: 'object',
  properties: { order: { type: 'string' }, email: { type: 'string' } },
  additionalProperties: false,
};

interface StoredEvent {
  id: string;
  status: string;
  reply: string | null;
  attempts: number;
  calls: { status: string }[];
  tool_calls: { round: number; tool: string; arguments: string; status: string; result: string }[];
  approval: { tool: string; arguments: string; requested_at: string; expires_at: string } | null;
}

/** `lookup` (never asks) and `refund` (always asks a person), both on the tool endpoint. */
async function addOrderTools(): Promise<void> {
  for (const [name, path, approval] of [
    ['lookup', '/orders', 'never'],
    ['refund', '/refunds', 'always'],
  ] as const) {
    const res = await driver.api('post', '/tools').send({
      name,
      kind: 'http',
      description: name === 'lookup' ? 'The status of an order' : 'Refunds an order',
      url: `${endpoint.baseUrl}${path}`,
      input_schema: ORDER_SCHEMA,
      approval,
    });
    expect(res.status, res.text).toBe(201);
  }
}

async function supportChannel(ai: Record<string, unknown> = {}): Promise<ChannelJson> {
  return driver.createChannel({
    name: 'Support',
    template: 'Ticket: {{text}}',
    ai: { tools: ['lookup', 'refund'], ...ai },
  });
}

/** The model looks the order up, then asks to refund it, then answers. */
function lookupThenRefund(refundArgs = '{"order":"A1"}', reply = 'Refunded.') {
  ai.enqueue(
    toolCallsAnswer(['lookup', '{"order":"A1"}']),
    toolCallsAnswer(['refund', refundArgs]),
    {
      body: chatCompletion(reply),
    },
  );
}

type Message = { role: string; content: unknown; tool_call_id?: string };
const messagesOf = (recorded: RecordedRequest | undefined) =>
  (recorded?.body as { messages: Message[] }).messages;

async function stored(id: string): Promise<StoredEvent> {
  return (await driver.api('get', `/events/${id}`).expect(200)).body as StoredEvent;
}

async function send(channel: ChannelJson, text = 'Refund A1 please'): Promise<string> {
  const res = await driver.sendEvent(channel.webhook_url, { text });
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

/** Sends a ticket and lets a worker take it until it parks. */
async function parked(channel: ChannelJson, text?: string): Promise<StoredEvent> {
  const id = await send(channel, text);
  await createWorker(app.ctx).runOnce();
  const event = await stored(id);
  expect(event.status).toBe('awaiting_approval');
  return event;
}

const refundCalls = () => endpoint.requests.filter((r) => r.url.startsWith('/refunds'));

async function toolCallsCounted(tool: string, status: string): Promise<number> {
  return metricValue(app.baseUrl, `hookprompt_tool_calls_total{tool="${tool}",status="${status}"}`);
}

afterEach(async () => {
  await app.ctx.db.query('delete from alerts');
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('update channels set deleted_at = now() where deleted_at is null');
  await app.ctx.db.query('delete from tools');
});

describe('a tool that needs an approval', () => {
  it('parks the event, then on approval makes the call once and goes on where it stopped', async () => {
    await addOrderTools();
    const channel = await supportChannel({ redact: ['email'], restore: true, spotlight: true });
    endpoint.answer = { status: 200, body: { order: 'A1', status: 'delivered' } };
    lookupThenRefund('{"order":"A1","email":"[EMAIL_1]"}', 'Refunded [EMAIL_1].');

    const event = await parked(channel, 'Refund A1 for ada@example.com');

    // The lookup was made; the refund waits, with its arguments as the tool would get them.
    expect(event.approval).toEqual({
      tool: 'refund',
      arguments: '{"order":"A1","email":"ada@example.com"}',
      requested_at: expect.any(String),
      expires_at: expect.any(String),
    });
    const { requested_at, expires_at } = event.approval ?? { requested_at: '', expires_at: '' };
    expect(Date.parse(expires_at) - Date.parse(requested_at)).toBe(86_400_000);
    expect(event.tool_calls.map((call) => [call.tool, call.status])).toEqual([
      ['lookup', 'ok'],
      ['refund', 'awaiting_approval'],
    ]);
    expect(event.calls).toHaveLength(2);
    expect(refundCalls()).toHaveLength(0);
    // Listed among the waiting events.
    const waiting = await driver.api('get', '/events?status=awaiting_approval').expect(200);
    expect((waiting.body.data as { id: string }[]).map((e) => e.id)).toEqual([event.id]);

    const decided = await driver
      .api('post', `/events/${event.id}/approval`)
      .send({ decision: 'approve' })
      .expect(200);
    expect(decided.body).toMatchObject({ id: event.id, status: 'pending', approval: null });
    await createWorker(app.ctx).runOnce();

    const done = await stored(event.id);
    expect(done).toMatchObject({ status: 'replied', reply: 'Refunded ada@example.com.' });
    // The refund was made once, with the real address; nothing before it was asked again.
    expect(refundCalls()).toHaveLength(1);
    expect(JSON.parse(refundCalls()[0]?.body ?? '')).toEqual({
      order: 'A1',
      email: 'ada@example.com',
    });
    expect(endpoint.requests.filter((r) => r.url.startsWith('/orders'))).toHaveLength(1);
    expect(ai.requests).toHaveLength(3);
    expect(done.calls).toHaveLength(3);
    expect(done.attempts).toBe(1);
    expect(done.tool_calls.map((call) => [call.round, call.tool, call.status])).toEqual([
      [1, 'lookup', 'ok'],
      [2, 'refund', 'ok'],
    ]);
    // The conversation went on with the same data tags and numbering.
    const tagOf = (recorded: RecordedRequest | undefined) =>
      /<(data-[a-z0-9]{16})>/.exec(String(messagesOf(recorded)[0]?.content))?.[1];
    expect(tagOf(ai.requests[2])).toBe(tagOf(ai.requests[0]));
    const last = messagesOf(ai.requests[2]);
    expect(last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual([
      'call_lookup_1',
      'call_refund_1',
    ]);
    expect(JSON.stringify(ai.requests.map((r) => r.body))).not.toContain('ada@example.com');
  });

  it('gives the model the denial and the note; the call is denied and never made', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    lookupThenRefund(undefined, 'I cannot refund that.');
    const event = await parked(channel);
    const deniedBefore = await toolCallsCounted('refund', 'denied');

    await driver
      .api('post', `/events/${event.id}/approval`)
      .send({ decision: 'deny', note: 'Not without a receipt' })
      .expect(200);
    await createWorker(app.ctx).runOnce();

    const done = await stored(event.id);
    expect(done.status).toBe('replied');
    expect(refundCalls()).toHaveLength(0);
    const given = messagesOf(ai.requests[2]).at(-1);
    expect(given).toMatchObject({
      role: 'tool',
      content: 'denied by an operator: Not without a receipt',
    });
    expect(done.tool_calls.at(-1)).toMatchObject({
      tool: 'refund',
      status: 'denied',
      result: 'denied by an operator: Not without a receipt',
    });
    expect(await toolCallsCounted('refund', 'denied')).toBe(deniedBefore + 1);
    // the decision is in the audit log, with who made it
    const audit = await driver
      .api('get', `/audit?action=event.approval&target_id=${event.id}`)
      .expect(200);
    expect(audit.body.data).toMatchObject([
      {
        action: 'event.approval',
        actor: { kind: 'api_key' },
        target: { kind: 'event', id: event.id },
        changes: {
          decision: { before: null, after: 'deny' },
          note: { before: null, after: 'Not without a receipt' },
        },
      },
    ]);
  });

  it('denies the call as "approval timed out" once APPROVAL_TIMEOUT_S passes', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    lookupThenRefund(undefined, 'No refund today.');
    const id = await send(channel);
    await createWorker(app.ctx, { approvalTimeoutS: 1 }).runOnce();
    const event = await stored(id);
    const { requested_at, expires_at } = event.approval ?? { requested_at: '', expires_at: '' };
    expect(Date.parse(expires_at) - Date.parse(requested_at)).toBe(1_000);
    // Not before its time.
    expect(await app.ctx.approvals.denyExpired()).toBe(0);

    await eventually(async () => (await app.ctx.approvals.denyExpired()) === 1, {
      what: 'the wait to time out',
    });
    expect((await stored(id)).status).toBe('pending');
    await createWorker(app.ctx).runOnce();

    const done = await stored(id);
    expect(done.status).toBe('replied');
    expect(done.tool_calls.at(-1)).toMatchObject({
      status: 'denied',
      result: 'approval timed out',
    });
    expect(messagesOf(ai.requests[2]).at(-1)?.content).toBe('approval timed out');
    expect(refundCalls()).toHaveLength(0);
    const audit = await driver.api('get', `/audit?action=event.approval&target_id=${id}`);
    expect(audit.body.data).toMatchObject([
      {
        actor: { kind: 'system' },
        changes: { reason: { before: null, after: 'approval timed out' } },
      },
    ]);
  });

  it('holds no worker slot: with one slot, other events are replied while one waits', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    const other = await driver.createChannel({ name: 'Other', template: 'Say hi: {{text}}' });
    lookupThenRefund();
    const worker = createWorker(app.ctx, { concurrency: 1, pollIntervalMs: 50 });
    await worker.start();
    try {
      // A sender waiting on the parked event gets "received" at its limit.
      const waited = await request(app.baseUrl)
        .post(new URL(channel.webhook_url).pathname + '?wait=1')
        .send({ text: 'Refund A1' })
        .expect(200);
      expect(waited.body).toMatchObject({ status: 'received' });
      const parkedId = waited.body.event_id as string;
      await eventually(async () => (await stored(parkedId)).status === 'awaiting_approval');

      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await send(other, `n${i}`));
      for (const id of ids) {
        await eventually(async () => (await stored(id)).status === 'replied', {
          what: `event ${id} to be replied`,
        });
      }
      expect((await stored(parkedId)).status).toBe('awaiting_approval');
    } finally {
      await worker.stop();
    }
  });

  it('refuses a decision on an event that does not wait: 409 not_awaiting_approval', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    lookupThenRefund();
    const event = await parked(channel);
    await driver
      .api('post', `/events/${event.id}/approval`)
      .send({ decision: 'sideways' })
      .expect(400);
    await driver
      .api('post', `/events/${event.id}/approval`)
      .send({ decision: 'approve' })
      .expect(200);

    const again = await driver
      .api('post', `/events/${event.id}/approval`)
      .send({ decision: 'deny' })
      .expect(409);
    expect(again.body).toMatchObject({ code: 'not_awaiting_approval' });
    await driver.api('post', '/events/999999999/approval').send({ decision: 'deny' }).expect(404);
  });
});

describe('approvals in Brain Logs and alerts', () => {
  let viewer: PanelClient;

  it('shows the waiting call with Approve and Deny, and approves from the event page', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    lookupThenRefund();
    const event = await parked(channel);

    // The filter offers the status and finds the event.
    const list = (await owner.page('/logs?status=awaiting_approval').expect(200)).text;
    expect(list).toContain('<option value="awaiting_approval" selected');
    expect(list).toContain(`data-event-id="${event.id}"`);
    for (const path of [`/logs/${event.id}`, `/logs/${event.id}/panel`]) {
      const html = (await owner.page(path).expect(200)).text;
      const block = /<div class="approval"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
      expect(unescapeHtml(block), path).toContain('<code class="tool-name">refund</code>');
      expect(unescapeHtml(block), path).toContain('{\n  "order": "A1"\n}');
      expect(block, path).toContain('value="approve"');
      expect(block, path).toContain('value="deny"');
      expect(block, path).toContain('name="note"');
    }
    // A viewer sees the call, not the buttons, and cannot post the decision.
    viewer ??= await inviteAdmin(owner, 'vic@example.com', 'vic password', 'viewer');
    const seen = (await viewer.page(`/logs/${event.id}`).expect(200)).text;
    expect(seen).toContain('id="approval"');
    expect(seen).not.toContain('value="approve"');
    await viewer.form(`/logs/${event.id}/approval`, { decision: 'approve' }).expect(403);
    expect((await stored(event.id)).status).toBe('awaiting_approval');

    const posted = await owner.form(`/logs/${event.id}/approval`, {
      decision: 'approve',
      note: '',
    });
    expect(posted.status).toBe(303);
    expect((await stored(event.id)).status).toBe('pending');
    await createWorker(app.ctx).runOnce();
    expect((await stored(event.id)).status).toBe('replied');
    expect(refundCalls()).toHaveLength(1);
  });

  it('approval_waiting fires while events wait, its value the number waiting', async () => {
    await addOrderTools();
    const channel = await supportChannel();
    const evaluator = app.ctx.alertsEvaluator as AlertsEvaluator;
    const notify = { kind: 'webhook', url: `${endpoint.baseUrl}/alerts` };
    const ids: string[] = [];
    for (const condition of [
      { type: 'approval_waiting' },
      { type: 'approval_waiting', channel_id: channel.id },
    ]) {
      const res = await driver
        .api('post', '/alerts')
        .send({ name: `Waiting ${ids.length}`, condition, notify });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id as string);
    }
    const states = async () =>
      Promise.all(
        ids.map(async (id) => {
          const alert = (await driver.api('get', `/alerts/${id}`).expect(200)).body;
          return [alert.state, alert.last_value];
        }),
      );
    await evaluator.runOnce();
    expect(await states()).toEqual([
      ['ok', null],
      ['ok', null],
    ]);

    // Each asks for the lookup, then the refund, and waits.
    for (let i = 0; i < 2; i++)
      ai.enqueue(
        toolCallsAnswer(['lookup', '{"order":"A1"}']),
        toolCallsAnswer(['refund', '{"order":"A1"}']),
      );
    const first = await parked(channel);
    await parked(channel);
    await evaluator.runOnce();
    expect(await states()).toEqual([
      ['firing', 2],
      ['firing', 2],
    ]);

    await driver.api('post', `/events/${first.id}/approval`).send({ decision: 'deny' }).expect(200);
    // One still waits: still firing (the value is the one it turned with).
    await evaluator.runOnce();
    expect(await states()).toEqual([
      ['firing', 2],
      ['firing', 2],
    ]);
    await app.ctx.db.query(`delete from events where status = 'awaiting_approval'`);
    await evaluator.runOnce();
    expect(await states()).toEqual([
      ['ok', 0],
      ['ok', 0],
    ]);
  });
});
