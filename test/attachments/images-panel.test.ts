import { describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { useTestApp } from '../support/harness.js';
import { TINY_PNG } from '../support/image-files.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from '../panel/panel-client.js';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);

const PNG_URL = `data:image/png;base64,${TINY_PNG.toString('base64')}`;

describe('images in the panel', () => {
  it('offers the image paths of the last payload, and saves the ones picked', async () => {
    const id = await client.createChannel('Tickets', 'Ticket {{text}}');
    const channel = (await driver.api('get', `/channels/${id}`).expect(200)).body;
    await driver.sendEvent(channel.webhook_url, {
      text: 'broken',
      user: { avatar: 'https://cdn.example.com/a.png?size=40' },
      shots: ['https://cdn.example.com/1.jpg', 'https://cdn.example.com/2.jpg'],
      homepage: 'not an image url',
    });

    const editor = unescapeHtml((await client.page(`/channels/${id}`)).text);
    expect(editor).toContain(
      '<datalist id="image-paths"><option value="payload.user.avatar"></option><option value="payload.shots"></option></datalist>',
    );
    expect(editor).toContain('list="image-paths"');

    const saved = await client.form(`/channels/${id}`, {
      name: 'Tickets',
      template: 'Ticket {{text}}',
      ai_image_1: 'payload.shots',
      ai_image_2: '',
      ai_image_3: 'payload.user.avatar',
      ai_image_4: '',
    });
    expect(saved.status).toBe(303);
    const after = (await driver.api('get', `/channels/${id}`).expect(200)).body;
    expect(after.ai.images).toEqual(['payload.shots', 'payload.user.avatar']);
    const shown = (await client.page(`/channels/${id}`)).text;
    expect(shown).toContain(
      'id="ai_image_1" name="ai_image_1" list="image-paths" value="payload.shots"',
    );
    expect(shown).toContain(
      'id="ai_image_2" name="ai_image_2" list="image-paths" value="payload.user.avatar"',
    );

    const refused = await client.form(`/channels/${id}`, {
      name: 'Tickets',
      template: 'Ticket {{text}}',
      ai_image_1: 'payload.shots',
      ai_image_2: 'shots',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(
      '<p class="field-error" id="ai_image_2-error">must start with payload.</p>',
    );
  });

  it('shows each image of an event on its Brain Logs page', async () => {
    const res = await driver.api('post', '/channels').send({
      name: 'Shots',
      template: '{{text}}',
      ai: { images: ['payload.shot', 'payload.missing'] },
    });
    const sent = await driver.sendEvent(res.body.webhook_url, { text: 'look', shot: PNG_URL });
    await createWorker(app.ctx).runOnce();
    const page = unescapeHtml((await client.page(`/logs/${sent.body.event_id}`)).text);
    const table = page.slice(page.indexOf('id="attachments"'), page.indexOf('</table>'));
    expect(table).toContain('<code>payload.shot</code>');
    expect(table).toContain('data URL');
    expect(table).toContain('<td>image/png</td>');
    expect(table).toContain(`<td>${TINY_PNG.length} B</td>`);
    expect(table).toContain('>sent</span>');
    expect(table).not.toContain('payload.missing');
  });
});
