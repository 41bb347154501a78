import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);

/** The text of the element with this id (no nested tags), unescaped. */
function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html);
  return match?.[1] === undefined ? undefined : unescapeHtml(match[1]);
}

describe('the channel list', () => {
  describe('on an app of its own, with no channels yet', () => {
    const { app: fresh } = useTestApp({ env: ADMIN_ENV });
    const other = useSignedInAdmin(fresh);

    it('tells a new workspace what to do first', async () => {
      const res = await other.page('/channels');
      expect(res.text).toContain('No channels in Default workspace yet');
      expect(res.text).toContain('href="/channels/new"');
    });
  });

  it('shows name, status, URL, events today and the last event', async () => {
    const id = await client.createChannel('Shop orders');
    const url = await client.webhookUrl(id);
    expect((await driver.sendEvent(url, { order: { id: 1 } })).status).toBe(200);
    expect((await driver.sendEvent(url, { order: { id: 2 } })).status).toBe(200);
    const html = (await client.page('/channels')).text;
    const row = html.slice(
      html.indexOf('Shop orders'),
      html.indexOf('</tr>', html.indexOf('Shop orders')),
    );
    expect(row).toContain('Active');
    expect(row).toContain(`value="${url}"`);
    expect(row).toMatch(/>2<\/a>/);
    expect(row).toContain('just now');
  });

  it('links "Events today (UTC)" to Brain Logs from midnight UTC, the same events it counts', async () => {
    const id = await client.createChannel('Counted today');
    const url = await client.webhookUrl(id);
    expect((await driver.sendEvent(url, { order: { id: 1 } })).status).toBe(200);
    // an event of yesterday (UTC) is neither counted nor listed
    expect((await driver.sendEvent(url, { order: { id: 0 } })).status).toBe(200);
    await app.ctx.db.query(
      `update events set received_at = date_trunc('day', now() at time zone 'utc') at time zone 'utc' - interval '1 minute'
       where id = (select max(id) from events where channel_id = $1)`,
      [id],
    );
    const html = (await client.page('/channels')).text;
    const row = html.slice(
      html.indexOf('Counted today'),
      html.indexOf('</tr>', html.indexOf('Counted today')),
    );
    const now = new Date();
    const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const link = `/logs?channel=${id}&amp;from=${midnight.toISOString().slice(0, 19)}`;
    expect(row).toContain(`href="${link}">1</a>`);
    const logs = (await client.page(unescapeHtml(link))).text;
    const listed = [...logs.matchAll(/<li class="event-row[^"]*" id="event-(\d+)"/g)].map(
      (m) => m[1],
    );
    const events = await driver.eventsOf(id);
    expect(listed).toEqual([events[0]?.id]);
  });
});

describe('creating a channel', () => {
  it('gives a working webhook URL right away', async () => {
    const res = await client.form('/channels', {
      name: 'Signups',
      template: 'Welcome {{user.name}}',
      enabled: 'on',
    });
    expect(res.status).toBe(303);
    const id = res.headers.location?.split('/').pop() as string;
    const editor = await client.page(`/channels/${id}`);
    expect(editor.text).toContain('Channel “Signups” created');
    const url = await client.webhookUrl(id);
    expect(url).toMatch(new RegExp(`^${app.baseUrl}/hooks/[A-Za-z0-9_-]{32,}$`));
    expect((await driver.sendEvent(url, { user: { name: 'Ada' } })).status).toBe(200);
  });

  it('can start disabled', async () => {
    const res = await client.form('/channels', { name: 'Later', template: 'x' });
    const id = res.headers.location?.split('/').pop() as string;
    expect((await driver.sendEvent(await client.webhookUrl(id))).status).toBe(403);
  });

  it('with an empty name shows the form again with the reason', async () => {
    const res = await client.form('/channels', { name: '  ', template: 'Keep this {{text}}' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('must not be empty');
    expect(res.text).toContain('Keep this {{text}}');
  });
});

describe('the channel editor', () => {
  it('saves name and template, keeping line breaks as typed', async () => {
    const id = await client.createChannel('Tickets');
    const res = await client.form(`/channels/${id}`, {
      name: 'Support tickets',
      template: 'Ticket {{ticket.id}}\r\nFrom {{ticket.from}}',
    });
    expect(res.status).toBe(303);
    const channel = (await driver.api('get', `/channels/${id}`)).body;
    expect(channel).toMatchObject({
      name: 'Support tickets',
      template: 'Ticket {{ticket.id}}\nFrom {{ticket.from}}',
    });
    expect((await client.page(`/channels/${id}`)).text).toContain('Channel saved.');
  });

  it('lists the placeholders and previews the prompt for a pasted sample, naming the missing fields', async () => {
    const id = await client.createChannel('Preview');
    const res = await client.form(`/channels/${id}/preview`, {
      name: 'Preview',
      template: 'Order {{order.id}} costs {{order.total}} for {{customer.name}}',
      sample: '{"order": {"id": 9007199254740993, "total": 1.50}}',
    });
    expect(res.status).toBe(200);
    expect(textOf(res.text, 'preview-output')).toBe('Order 9007199254740993 costs 1.50 for ');
    expect(res.text).toMatch(/id="missing-placeholders">[\s\S]*\{\{customer\.name\}\}/);
    for (const placeholder of ['order.id', 'order.total', 'customer.name'])
      expect(res.text).toContain(`<code>{{${placeholder}}}</code>`);
    // A preview changes nothing.
    expect((await driver.api('get', `/channels/${id}`)).body.template).toBe('Order {{order.id}}');
  });

  it('explains a sample that is not a JSON object', async () => {
    const id = await client.createChannel('Bad sample');
    const invalid = await client.form(`/channels/${id}/preview`, {
      template: '{{a}}',
      sample: '{"a": ',
    });
    expect(invalid.text).toContain('The sample is not valid JSON');
    const array = await client.form(`/channels/${id}/preview`, {
      template: '{{a}}',
      sample: '[1, 2]',
    });
    expect(array.text).toContain('The sample must be a JSON object');
  });

  it('warns when the prompt renders empty', async () => {
    const id = await client.createChannel('Empty');
    const res = await client.form(`/channels/${id}/preview`, {
      template: '{{absent}}',
      sample: '{"a": 1}',
    });
    expect(res.text).toContain('The prompt is empty for this payload');
  });

  it('previews against the last payload the channel received', async () => {
    const id = await client.createChannel('Last payload', 'Hi {{who}}');
    const url = await client.webhookUrl(id);
    await driver.sendEvent(url, { who: 'first' });
    await driver.sendEvent(url, { who: 'second' });
    await driver.sendEvent(url, '[not an object]');
    const res = await client.form(`/channels/${id}/preview`, {
      template: 'Hi {{who}}',
      sample: '{}',
      source: 'last',
    });
    expect(textOf(res.text, 'preview-output')).toBe('Hi second');
    expect(res.text).toContain('The sample is the last payload this channel received.');
  });

  it('opens with the last payload received as its sample, a made-up one before any', async () => {
    const id = await client.createChannel('Real sample', 'Hi {{who}}');
    const fresh = (await client.page(`/channels/${id}`)).text;
    expect(textOf(fresh, 'sample')).toContain('"who": "example"');
    const url = await client.webhookUrl(id);
    await driver.sendEvent(url, { who: 'Ada' });
    await driver.sendEvent(url, '[not an object]');
    const html = (await client.page(`/channels/${id}`)).text;
    expect(textOf(html, 'sample')).toBe('{"who":"Ada"}');
    expect(textOf(html, 'preview-output')).toBe('Hi Ada');
    expect(html).toContain('The sample is the last payload this channel received.');
  });

  it('says so when nothing usable was received yet', async () => {
    const id = await client.createChannel('Quiet', 'Hi {{who}}');
    const res = await client.form(`/channels/${id}/preview`, {
      template: 'Hi {{who}}',
      sample: '{"who": "me"}',
      source: 'last',
    });
    expect(res.text).toContain('No JSON object has been received on this channel');
    expect(textOf(res.text, 'preview-output')).toBe('Hi me');
  });

  it('sends a test event through the receiver, recorded in Brain Logs', async () => {
    const id = await client.createChannel('Test me', 'Order {{order.id}}');
    const res = await client.form(`/channels/${id}/test`, {
      template: 'Order {{order.id}}',
      sample: '{"order": {"id": 77}}',
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Test event received (200)');
    const events = await driver.eventsOf(id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 'pending', payload: '{"order": {"id": 77}}' });
    expect(res.text).toContain(`/logs/${events[0]?.id}`);
    const workspace = (await driver.api('get', '/workspace')).body;
    expect(workspace.chats_used).toBeGreaterThan(0);
  });

  it('shows why the receiver refuses a test event to a disabled channel', async () => {
    const id = await client.createChannel('Test disabled');
    await client.form(`/channels/${id}/disable`);
    const res = await client.form(`/channels/${id}/test`, { sample: '{"order": {"id": 1}}' });
    expect(res.text).toContain('The receiver refused the test event (403 channel_disabled)');
    expect(res.text).toContain('Refused: the channel is disabled');
    const events = await driver.eventsOf(id);
    expect(events.map((e) => [e.status, e.error])).toEqual([['rejected', 'channel_disabled']]);
  });

  it('disables and enables the channel', async () => {
    const id = await client.createChannel('Toggle');
    const url = await client.webhookUrl(id);
    expect((await client.form(`/channels/${id}/disable`)).status).toBe(303);
    expect((await client.page(`/channels/${id}`)).text).toContain(
      'Channel disabled: senders now get 403',
    );
    expect((await driver.sendEvent(url)).status).toBe(403);
    await client.form(`/channels/${id}/enable`);
    expect((await driver.sendEvent(url)).status).toBe(200);
  });

  it('regenerates the URL after a confirmation that says the old one stops working', async () => {
    const id = await client.createChannel('Rotate', 'Keep {{me}}');
    const oldUrl = await client.webhookUrl(id);
    const confirm = await client.page(`/channels/${id}/regenerate`);
    expect(confirm.text).toContain('The current URL stops working at once.');
    expect(confirm.text).toContain('Update every sender');
    const res = await client.form(`/channels/${id}/regenerate`);
    expect(res.status).toBe(303);
    const newUrl = await client.webhookUrl(id);
    expect(newUrl).not.toBe(oldUrl);
    expect((await driver.sendEvent(oldUrl)).status).toBe(404);
    expect((await driver.sendEvent(newUrl)).status).toBe(200);
    expect((await driver.api('get', `/channels/${id}`)).body).toMatchObject({
      name: 'Rotate',
      template: 'Keep {{me}}',
      enabled: true,
    });
  });

  it('deletes the channel after a confirmation; its URL answers 404, its events stay', async () => {
    const id = await client.createChannel('Doomed');
    const url = await client.webhookUrl(id);
    await driver.sendEvent(url, { last: 'words' });
    expect((await client.page(`/channels/${id}/delete`)).text).toContain('cannot be brought back');
    const res = await client.form(`/channels/${id}/delete`);
    expect(res.headers.location).toBe('/channels');
    expect((await client.page('/channels')).text).toContain('Channel “Doomed” deleted');
    expect((await client.page(`/channels/${id}`)).status).toBe(404);
    expect((await driver.sendEvent(url)).status).toBe(404);
    const logs = await client.page('/logs');
    expect(logs.text).toContain(`Deleted channel #${id}`);
  });

  it('carries a sender guide with a curl line for its URL', async () => {
    const id = await client.createChannel('Guide', 'Order {{order.id}}');
    const url = await client.webhookUrl(id);
    const html = (await client.page(`/channels/${id}`)).text;
    expect(textOf(html, 'curl-line')).toBe(
      `curl -X POST '${url}' -H 'Content-Type: application/json' -d '{"order":{"id":"example"}}'`,
    );
    expect(html).toContain('Content-Type: application/json');
    expect(html).toContain('webhook by URL');
  });

  it('answers 404 for ids that are not channels', async () => {
    for (const path of ['/channels/999999', '/channels/abc', '/channels/0/regenerate']) {
      expect((await client.page(path)).status, path).toBe(404);
    }
  });
});
