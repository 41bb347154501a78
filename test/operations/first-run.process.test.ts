import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INITIAL_API_KEY_FILE } from '../../src/auth/first-run.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** The indented shell lines of the first-run text, as a user copies them. */
function commandsIn(output: string): string {
  const start = output.indexOf('A first event and its reply, from a shell:');
  const end = output.indexOf('Brain Logs:', start);
  expect(start, output).toBeGreaterThan(-1);
  return output
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .join('\n');
}

async function waitForText(server: ServerProcess, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!server.output().includes(text) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

// The process is the point: what `npm start` prints at a terminal, and the commands it prints
// reaching a reply (first-run.test.ts holds when the text is shown).
describe('the first start', () => {
  it('makes an API key and prints commands that reach a reply, once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookprompt-first-run-'));
    server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    await waitForText(server, 'hookprompt listening');
    const commands = commandsIn(server.output());
    const keyFile = join(dataDir, INITIAL_API_KEY_FILE);
    expect(commands).toContain(`KEY=$(cat '${keyFile}')`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const run = spawnSync('bash', ['-c', commands], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({ status: 'replied', event_id: expect.any(String) });
    expect(String(answer.reply)).toContain('Ada');

    await server.stop();
    server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    // the text would come before this line
    await waitForText(server, 'hookprompt listening');
    expect(server.output()).not.toContain('A first event and its reply');
  }, 60_000);
});
