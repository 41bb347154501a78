import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, inlineCode, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const KEY = 'sk-panel-provider-key-0123456789abcdef';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { ...ADMIN_ENV, PROVIDERS_ALLOW_PRIVATE: 'true' },
});
const client = useSignedInAdmin(app);

async function providerId(name: string): Promise<string> {
  const { body } = await driver.api('get', '/providers').expect(200);
  const found = (body.data as { id: string; name: string }[]).find((p) => p.name === name);
  if (!found) throw new Error(`no provider ${name}`);
  return found.id;
}

describe('the Providers page', () => {
  it('is linked in the navigation and lists the built-in default', async () => {
    const page = await client.page('/providers');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/providers" aria-current="page">Providers</a>');
    expect(page.text).toContain('data-provider="default"');
    expect(inlineCode(page.text)).toEqual([]);
  });

  it('adds a provider whose key is never shown again, edits, tests and deletes it', async () => {
    const added = await client.form('/providers', {
      name: 'local',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key: KEY,
    });
    expect(added.status).toBe(303);
    const id = await providerId('local');
    const list = await client.page('/providers');
    expect(list.text).toContain('data-provider="local"');
    expect(list.text).not.toContain(KEY);

    const edit = await client.page(`/providers/${id}`);
    expect(edit.text).toContain('(set; leave empty to keep it)');
    expect(edit.text).toContain('id="api_key" name="api_key" value=""');
    expect(edit.text).not.toContain(KEY);

    // An empty key field keeps the key; renaming works.
    const saved = await client.form(`/providers/${id}`, {
      name: 'local-llm',
      base_url: ai.baseUrl,
      api_key: '',
    });
    expect(saved.status).toBe(303);
    expect((await driver.api('get', `/providers/${id}`)).body).toMatchObject({
      name: 'local-llm',
      api_key_set: true,
    });

    const tested = await client.form(`/providers/${id}/test`, { model: 'tiny-model' });
    expect(tested.status).toBe(200);
    expect(unescapeHtml(tested.text)).toMatch(
      /Connected: <code>tiny-model<\/code> answered in \d+ ms/,
    );
    expect(ai.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);

    ai.enqueue({ status: 401, body: { error: { message: 'Invalid key' } } });
    const failed = await client.form(`/providers/${id}/test`, { model: 'tiny-model' });
    expect(unescapeHtml(failed.text)).toMatch(
      /Failed: The AI server refused the request \(HTTP 401\)/,
    );

    const cleared = await client.form(`/providers/${id}`, {
      name: 'local-llm',
      base_url: ai.baseUrl,
      api_key: '',
      clear_api_key: '1',
    });
    expect(cleared.status).toBe(303);
    expect((await driver.api('get', `/providers/${id}`)).body.api_key_set).toBe(false);

    expect((await client.form(`/providers/${id}/delete`)).status).toBe(303);
    await driver.api('get', `/providers/${id}`).expect(404);
    expect(app.logText()).not.toContain(KEY);
  });

  it('shows a taken name next to the field', async () => {
    const res = await client.form('/providers', { name: 'default', kind: 'echo' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('id="name-error"');
  });
});

describe('the channel editor and Brain Logs', () => {
  it('chooses a provider and fallbacks, and shows each call on the event page', async () => {
    await client.form('/providers', { name: 'offline', kind: 'echo' });
    const offlineId = await providerId('offline');
    const channelId = await client.createChannel('Routed', 'Order {{order.id}}');
    const editor = await client.page(`/channels/${channelId}`);
    expect(editor.text).toContain('<option value="offline">offline</option>');

    const saved = await client.form(`/channels/${channelId}`, {
      name: 'Routed',
      template: 'Order {{order.id}}',
      ai_provider: 'default',
      ai_fallback_provider_1: 'offline',
      ai_fallback_model_1: 'echo-model',
      ai_fallback_provider_2: '',
      ai_fallback_model_2: '',
    });
    expect(saved.status).toBe(303);
    const channel = (await driver.api('get', `/channels/${channelId}`)).body;
    expect(channel.ai).toMatchObject({
      provider: 'default',
      fallbacks: [{ provider: 'offline', model: 'echo-model' }],
    });
    const shown = (await client.page(`/channels/${channelId}`)).text;
    expect(shown).toMatch(/name="ai_fallback_provider_1"[\s\S]*?<option value="offline" selected>/);

    // Deleting the provider while the channel names it is refused, on the page.
    const refused = await client.form(`/providers/${offlineId}/delete`);
    expect(refused.status).toBe(400);
    expect(unescapeHtml(refused.text)).toContain('is named by the channel "Routed"');

    ai.enqueue({ status: 503 });
    const sent = await driver.sendEvent(await client.webhookUrl(channelId), { order: { id: 5 } });
    await createWorker(app.ctx).runOnce();
    const page = await client.page(`/logs/${sent.body.event_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="calls"');
    expect(page.text).toContain('data-call-status="error"');
    expect(page.text).toContain('data-call-status="ok"');
    expect(page.text).toContain('<code>offline</code>');
    expect(page.text).toContain('<code>echo-model</code>');
    expect(page.text).toMatch(/<td class="num">503<\/td>/);
  });
});
