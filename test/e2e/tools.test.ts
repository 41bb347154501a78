import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { McpTestServer } from '../support/tool-servers.js';
import { ADMIN_ENV } from '../panel/panel-client.js';
import {
  NOT_RUN,
  hasChromium,
  launchChromium,
  signedInPage,
  checkVisitedPages,
} from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/** The Tools page in a real browser: the form shows the fields of the kind picked. */
describe.skipIf(!hasChromium)('the Tools page in a real browser', () => {
  const mcp = useFixture(() => McpTestServer.start(), { stop: (server) => server.close() });
  const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, TOOLS_ALLOW_PRIVATE: 'true' } });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    page = await signedInPage(browser, app.baseUrl, problems);
  });

  it('adds an MCP server with only its fields shown, and lists what it offers', async () => {
    await page.goto('/tools');
    await page.getByRole('link', { name: 'Tools', exact: true }).waitFor();
    // HTTP is picked first: its method and schema are shown, the MCP list is not.
    expect(await page.isVisible('#input_schema')).toBe(true);
    expect(await page.isVisible('#allowed_tools')).toBe(false);

    await page.fill('#name', 'weather');
    await page.selectOption('#kind', 'mcp');
    expect(await page.isVisible('#input_schema')).toBe(false);
    expect(await page.isVisible('#allowed_tools')).toBe(true);
    await page.fill('#description', 'Weather tools');
    await page.fill('#url', mcp.url);
    await page.fill('#allowed_tools', 'forecast');
    await page.getByRole('button', { name: 'Add tool' }).click();

    await page.getByRole('heading', { level: 1, name: 'weather' }).waitFor();
    const { body } = await driver.api('get', '/tools').expect(200);
    expect(body.data).toMatchObject([
      { name: 'weather', kind: 'mcp', allowed_tools: ['forecast'] },
    ]);

    await page.getByRole('button', { name: "List the server's tools" }).click();
    await page.locator('#server-tools').waitFor();
    const column = (n: number) =>
      page.locator(`#server-tools tbody td:nth-child(${n})`).allTextContents();
    const [names, offeredCells] = await Promise.all([column(1), column(3)]);
    expect(names.map((name, i) => `${name}: ${offeredCells[i]}`)).toEqual([
      'weather: No',
      'forecast: Yes',
      'time: No',
    ]);
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});
