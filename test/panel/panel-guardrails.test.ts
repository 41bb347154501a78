import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: { ...ADMIN_ENV } });
const client = useSignedInAdmin(app);

/** Posts the editor form as a browser does: checkboxes repeat their name, unchecked ones are left out. */
function postEditor(path: string, fields: [string, string][]) {
  const body = new URLSearchParams([['_csrf', client.csrf], ...fields]).toString();
  return client.agent
    .post(path)
    .set('Accept', 'text/html')
    .set('Content-Type', 'application/x-www-form-urlencoded')
    .send(body);
}

const editorFields = (extra: [string, string][]): [string, string][] => [
  ['name', 'Tickets'],
  ['template', 'Ticket from {{email}}: {{text}}'],
  ['ai_guard_shown', '1'],
  ...extra,
];

describe('channel editor: guardrails and accept_when', () => {
  it('saves the guard settings and the conditions, and shows them again', async () => {
    const id = await client.createChannel('Tickets', 'x');
    const saved = await postEditor(
      `/channels/${id}`,
      editorFields([
        ['ai_redact', 'email'],
        ['ai_redact', 'card'],
        ['ai_restore', 'on'],
        ['accept_when', 'payload.type eq "ticket"\npayload.priority gte 2'],
      ]),
    );
    expect(saved.status).toBe(303);
    const channel = (await driver.api('get', `/channels/${id}`)).body;
    expect(channel.ai).toMatchObject({ redact: ['email', 'card'], restore: true, spotlight: null });
    expect(channel.accept_when).toEqual([
      { path: 'payload.type', op: 'eq', value: 'ticket' },
      { path: 'payload.priority', op: 'gte', value: 2 },
    ]);
    const html = (await client.page(`/channels/${id}`)).text;
    expect(html).toContain('name="ai_redact" value="email" data-preview-input checked');
    expect(html).not.toContain('name="ai_redact" value="phone" data-preview-input checked');
    expect(unescapeHtml(html)).toContain(
      'payload.type eq "ticket"\npayload.priority gte 2</textarea>',
    );

    // Unchecking every box turns the guardrails off.
    await postEditor(`/channels/${id}`, editorFields([['accept_when', '']])).expect(303);
    const off = (await driver.api('get', `/channels/${id}`)).body;
    expect(off.ai).toMatchObject({ redact: null, restore: null });
    expect(off.accept_when).toEqual([]);
  });

  it('refuses a condition it cannot read, next to the field', async () => {
    const id = await client.createChannel('Tickets', 'x');
    const res = await postEditor(
      `/channels/${id}`,
      editorFields([['accept_when', 'payload.type resembles "ticket"']]),
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('id="accept_when-error"');
    expect(res.text).toContain('Line 1: write a path');
  });

  it('previews the prompt as sent and whether the sample would be filtered', async () => {
    const id = await client.createChannel('Tickets', 'x');
    const res = await postEditor(
      `/channels/${id}/preview`,
      editorFields([
        ['ai_redact', 'email'],
        ['ai_spotlight', 'on'],
        ['accept_when', 'payload.priority gte 2'],
        ['sample', '{"email": "ada@example.com", "text": "help", "priority": 1}'],
      ]),
    );
    expect(res.status).toBe(200);
    const text = unescapeHtml(res.text);
    const tag = /Text between <(data-[a-z0-9]{12,})>/.exec(text)?.[1] as string;
    expect(tag).toBeDefined();
    expect(text).toContain(`Ticket from <${tag}>[EMAIL_1]</${tag}>: <${tag}>help</${tag}>`);
    expect(text).toContain('1 email');
    expect(text).toContain('This payload would be filtered: <code>payload.priority gte 2</code>');
  });
});

describe('Brain Logs', () => {
  it('shows a filtered event with its condition, and the redaction counts', async () => {
    const channel = await driver.createChannel({
      name: 'Filtered',
      template: 'Mail {{email}}',
      ai: { redact: ['email'] },
      accept_when: [{ path: 'payload.ok', op: 'eq', value: true }],
    });
    const filtered = await driver.sendEvent(channel.webhook_url, { ok: false });
    const kept = await driver.sendEvent(channel.webhook_url, { ok: true, email: 'a@example.com' });
    await createWorker(app.ctx).runOnce();

    const page = unescapeHtml(
      (await client.page(`/logs/${filtered.body.event_id as string}`)).text,
    );
    expect(page).toContain('Filtered');
    expect(page).toContain('<code>payload.ok eq true</code>');
    const list = unescapeHtml((await client.page('/logs?status=filtered')).text);
    expect(list).toContain('Filtered: payload.ok eq true did not hold');
    expect(list).not.toContain(`event-${kept.body.event_id as string}"`);
    const replied = unescapeHtml((await client.page(`/logs/${kept.body.event_id as string}`)).text);
    expect(replied).toContain('1 email (distinct values sent as placeholders)');
    expect(replied).toContain('Mail [EMAIL_1]');
  });
});
