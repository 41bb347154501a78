import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { ADMIN_ENV, inlineCode, useSignedInAdmin } from './panel-client.js';

const SCRIPT = '<script>alert(1)</script>';
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';

const { app, driver } = useTestApp({ env: ADMIN_ENV });
const client = useSignedInAdmin(app);
let channelId: string;
let eventId: string;

beforeAll(async () => {
  channelId = await client.createChannel(
    SCRIPT,
    `${SCRIPT} {{html}} "><img src=x onerror=alert(2)>`,
  );
  const url = await client.webhookUrl(channelId);
  eventId = String(
    (await driver.sendEvent(url, { html: SCRIPT, '"><svg onload=alert(3)>': 1 })).body.event_id,
  );
  await driver.sendEvent(url, `not json ${SCRIPT}`);
  await app.ctx.db.query(
    `update events set prompt = $2, reply = $3, status = 'replied' where id = $1`,
    [eventId, `prompt ${SCRIPT}`, `reply ${SCRIPT}`],
  );
  await client.form('/workspace', { name: SCRIPT, chat_quota: '100' });
  await client.form('/workspace/api-keys', { name: SCRIPT });
});

describe('text from channels, templates and payloads', () => {
  it.each([
    ['/channels'],
    ['/channels/:channel'],
    ['/channels/:channel/regenerate'],
    ['/channels/:channel/delete'],
    ['/logs'],
    ['/logs/:event'],
    ['/workspace'],
  ])('is escaped on %s', async (pattern) => {
    const path = pattern.replace(':channel', channelId).replace(':event', eventId);
    const res = await client.page(path);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(SCRIPT);
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).not.toContain('<svg onload');
    expect(res.text).toContain(ESCAPED);
    expect(inlineCode(res.text)).toEqual([]);
  });

  it('is escaped in the preview of a pasted sample', async () => {
    const res = await client.form(`/channels/${channelId}/preview`, {
      template: `${SCRIPT} {{html}}`,
      sample: JSON.stringify({ html: SCRIPT }),
    });
    expect(res.text).not.toContain(SCRIPT);
    expect(res.text).toContain(
      `<pre class="preview-output" id="preview-output" tabindex="0">${ESCAPED} ${ESCAPED}</pre>`,
    );
  });
});
