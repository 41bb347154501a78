import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import { TEST_ADMIN_KEY } from '../support/test-app.js';
import { canRunGuides, failedApiCalls, GUIDES_NOT_RUN, runGuide } from './guide-runner.js';

// docs/guides/real-webhooks-on-a-laptop.md without its tunnel (this machine has no way out):
// a server started with the page's PUBLIC_BASE_URL line, and the page's commands reading the
// channel's URL, which must start with the tunnel's address and reach the channel once the
// tunnel forwards it to the local server.

if (!canRunGuides) {
  console.warn(`hookprompt: ${GUIDES_NOT_RUN}`);
  it.skip(GUIDES_NOT_RUN, () => undefined);
}

const PAGE = 'real-webhooks-on-a-laptop.md';
/** The page's PUBLIC_BASE_URL line, with the address a quick tunnel printed. */
const tunnelLine = /'PUBLIC_BASE_URL=(\S+)'/.exec(readFileSync(`docs/guides/${PAGE}`, 'utf8'));
const TUNNEL = (tunnelLine?.[1] ?? '').replace('<random>', 'quiet-river-1234');

const { app, driver } = useTestApp({ env: { PUBLIC_BASE_URL: TUNNEL } });

describe.skipIf(!canRunGuides)('the laptop guide, without its tunnel', () => {
  it("prints the channel's URL at the tunnel's address, which reaches the channel", async () => {
    const channel = await driver.createChannel({ name: 'GitHub', template: 'Push {{ref}}' });
    const result = await runGuide(PAGE, {
      variables: { HOOKPROMPT: app.baseUrl, API_KEY: TEST_ADMIN_KEY, CHANNEL_ID: channel.id },
      keep: ['WEBHOOK_URL'],
    });

    expect(failedApiCalls(result)).toEqual([]);
    const url = new URL(result.vars.WEBHOOK_URL ?? '');
    expect(url.origin).toBe('https://quiet-river-1234.trycloudflare.com');
    expect(result.printed(1).trim()).toBe(url.href);
    // what the tunnel does: the same path, on the local server
    const sent = await driver.sendEvent(`${app.baseUrl}${url.pathname}`, {
      ref: 'refs/heads/main',
    });
    expect(sent.status).toBe(200);
    expect((await driver.eventsOf(channel.id)).map((event) => event.id)).toEqual([
      sent.body.event_id,
    ]);
  });
});
