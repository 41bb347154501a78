import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { NOT_RUN, hasChromium, launchChromium } from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/** The page of docs/guides/browser-senders.md, exactly as the guide shows it. */
function guidePage(webhookUrl: string): string {
  const guide = readFileSync('docs/guides/browser-senders.md', 'utf8');
  const html = /```html\n([\s\S]*?)```/.exec(guide)?.[1];
  if (!html) throw new Error('the guide shows no page');
  return `<!doctype html><meta charset="utf-8"><title>Shop</title>${html.replace('WEBHOOK_URL', webhookUrl)}`;
}

/** A site of its own (another port: another origin) serving the guide's page. */
async function startShopSite(page: () => string): Promise<Server & { port: number }> {
  const server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(page());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

describe.skipIf(!hasChromium)('a web page on another site posts to a channel', () => {
  const { app, driver } = useTestApp({ ai: true });
  let channel: ChannelJson | undefined;
  const site = useFixture(() => startShopSite(() => guidePage(channel?.webhook_url ?? '')), {
    stop: (server) => new Promise((resolve) => server.close(resolve)),
  });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });

  async function ask(origin: string, message: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/`);
    await page.fill('#message', message);
    await page.click('button');
    return page;
  }

  /** Runs the worker until the page shows something other than "Thinking…". */
  async function answerOn(page: Page): Promise<string> {
    for (;;) {
      await app.ctx.worker?.runOnce();
      const text = await page.textContent('#answer');
      if (text && text !== 'Thinking…') return text;
      await page.waitForTimeout(50);
    }
  }

  it("shows the channel's reply on a page of a listed origin, and nothing reaches it from another", async () => {
    const listed = `http://127.0.0.1:${site.port}`;
    channel = await driver.createChannel({
      template: 'A visitor asks: {{message}}',
      allowed_origins: [listed],
    });

    const page = await ask(listed, 'Do you ship to Norway?');
    expect(await answerOn(page)).toBe(fakeReplyTo('A visitor asks: Do you ship to Norway?'));

    // The same page served as localhost: another origin. Its preflight is refused, so the
    // browser never sends the event.
    const elsewhere = await ask(`http://localhost:${site.port}`, 'Hello?');
    expect(await answerOn(elsewhere)).toBe('Could not reach the service.');
    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => e.status)).toEqual(['replied']);
  });
});
