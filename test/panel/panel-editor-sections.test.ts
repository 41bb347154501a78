import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from './panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);

async function editorOf(channel: { id: string }): Promise<string> {
  const res = await client.page(`/channels/${channel.id}`);
  expect(res.status).toBe(200);
  return res.text;
}

describe('the channel editor as sections you can find', () => {
  it('lists its section links in the order of the sections on the page', async () => {
    const html = await editorOf(await driver.createChannel({ name: 'Order' }));
    const nav = /<nav class="section-tabs"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? '';
    const targets = [...nav.matchAll(/href="#([\w-]+)"/g)].map((m) => m[1] as string);
    expect(targets.length).toBeGreaterThanOrEqual(5);
    const positions = targets.map((id) => html.indexOf(`id="${id}"`));
    for (const position of positions) expect(position).toBeGreaterThan(html.indexOf('</nav>'));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('puts the Model by the Provider, before the fallbacks, and has one Save for the channel', async () => {
    const html = await editorOf(await driver.createChannel({ name: 'Model' }));
    const provider = html.indexOf('id="ai_provider"');
    const model = html.indexOf('id="ai_model"');
    expect(provider).toBeGreaterThan(0);
    expect(model).toBeGreaterThan(provider);
    expect(model).toBeLessThan(html.indexOf('id="ai-fallbacks"'));
    const editorForm =
      /<form method="post" action="\/channels\/\d+" id="editor"[\s\S]*?<\/form>/.exec(html)?.[0];
    expect(
      editorForm?.match(/<button type="submit" class="button primary">[^<]*<\/button>/g),
    ).toEqual(['<button type="submit" class="button primary">Save channel</button>']);
  });

  it('marks the schema box as for schema replies only: shown without JavaScript, hidden by it otherwise', async () => {
    const html = await editorOf(await driver.createChannel({ name: 'Schema' }));
    expect(html).toMatch(
      /<div class="field" id="ai-json-schema-field" data-shown-for="ai_response_format=json_schema">\s*<label for="ai_json_schema">/,
    );
    expect(html).not.toMatch(/id="ai-json-schema-field"[^>]*hidden/);
    const script = await client.page('/static/panel.js');
    expect(script.text).toContain('data-shown-for');
  });

  it('lists the destinations first with their health, asks before removing one, and labels fields in words', async () => {
    const channel = await driver.createChannel({
      name: 'Chats',
      destinations: [{ kind: 'telegram', bot_token: '9:TOKEN', chat_id: '77' }],
    });
    const html = await editorOf(channel);
    const replies =
      /<section class="card" aria-labelledby="replies-heading"[\s\S]*?<\/section>/.exec(
        html,
      )?.[0] ?? '';
    // The destinations come before the explanations of the ways a sender gets its reply.
    expect(replies.indexOf('Chats and other destinations')).toBeGreaterThan(0);
    expect(replies.indexOf('Chats and other destinations')).toBeLessThan(
      replies.indexOf('1. Wait for it in the answer'),
    );
    expect(replies).toContain('<strong>Telegram chat 77</strong>');
    expect(replies).toMatch(
      /class="badge badge-delivery-skipped destination-health">Nothing sent yet</,
    );

    const { body } = await driver.api('get', `/channels/${channel.id}`).expect(200);
    const id = body.destinations[0].id as string;
    const remove = new RegExp(
      `<form method="post" action="/channels/${channel.id}/destinations/${id}/remove" class="inline-form" data-confirm="([^"]+)">`,
    ).exec(html);
    expect(unescapeHtml(remove?.[1] ?? '')).toBe(
      'Remove the destination Telegram chat 77? Its messages stop; those already sent stay in Brain Logs.',
    );

    const labels = [...html.matchAll(/<label for="dest-new-telegram_\w+">([^<(]+)/g)].map((m) =>
      (m[1] as string).trim(),
    );
    expect(labels).toEqual(['Bot token', 'Chat ID', 'Reply to message ID']);
    expect(html).toContain('<option value="telegram">Telegram</option>');
    expect(html).not.toMatch(
      /<label for="dest-[\w-]+">(chat_id|bot_token|webhook_url|thread_ts)\b/,
    );
  });

  it("shows the chosen signature scheme's guide alone once the script runs", async () => {
    const css = (await client.page('/static/panel.css')).text;
    expect(css).toMatch(/\.js \.scheme-guide-item:not\(\.current\)\s*\{[^}]*display: none/);
    expect(css).toMatch(/\.section-tabs ~ \* \[id\]\s*\{\s*scroll-margin-top: 3\.5rem/);
  });
});
