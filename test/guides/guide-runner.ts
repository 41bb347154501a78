import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Runs a guide of docs/guides/ as a reader would: its ```sh blocks in order, in one bash
 * (`-euo pipefail`, so a failing command or an unset variable fails the run), with the page's
 * variables set to the test's values. A block whose first line is a comment starting
 * `# on your machine` needs a human or a real outside service and is not run.
 */

/** The tools the guides' commands use; without one, the guide tests are skipped. */
const TOOLS = ['bash', 'curl', 'jq'];
const missing = TOOLS.filter(
  (tool) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).error !== undefined,
);
export const canRunGuides = missing.length === 0;
export const GUIDES_NOT_RUN = `the guides' commands need ${missing.join(', ')} (not installed here): the guide tests are skipped`;

export const NOT_RUN_MARK = '# on your machine';

export interface GuideBlock {
  /** The block's commands, as the page shows them. */
  text: string;
  /** Marked `# on your machine`: shown to readers, not run by the test. */
  skipped: boolean;
}

export interface CurlCall {
  method: string;
  status: number;
  url: string;
}

export interface GuideRun {
  /** What the page's block `index` (from 0) printed on standard output (a skipped one: ''). */
  printed(index: number): string;
  /** Every curl request the commands made, with its answer's status. */
  calls: CurlCall[];
  /** The values of the variables asked for (`keep`) after the last block. */
  vars: Record<string, string>;
  stderr: string;
}

export interface GuideRunOptions {
  /** The page's variables (set in its first block) and the test's values for them. */
  variables: Record<string, string>;
  /**
   * Text of the page replaced before it runs, for addresses of outside services (a fake stands
   * in). Each must occur in the page, so the test notices when the page changes.
   */
  replace?: [string, string][];
  /** Variables set by the commands to read back after the run. */
  keep?: string[];
  /** Files the page tells the reader to save (name → text), in the folder the commands run in. */
  files?: Record<string, string>;
  /** Called again and again while the commands run: the test drives the workers. */
  meanwhile?: () => Promise<unknown>;
}

export function guideBlocks(page: string): GuideBlock[] {
  const text = readFileSync(`docs/guides/${page}`, 'utf8');
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, body = '']) => ({
    text: body,
    skipped: body.startsWith(NOT_RUN_MARK),
  }));
}

/** The first line of a block of `.env` lines (a `# on your machine` block: not run). */
export const ENV_MARK = '# on your machine, in .env:';

/** The page's `.env` blocks, in order, read as the service reads its `.env` file. */
export function guideEnvBlocks(page: string): Record<string, string>[] {
  return guideBlocks(page)
    .filter((block) => block.text.startsWith(ENV_MARK))
    .map((block) => parseEnv(block.text) as Record<string, string>);
}

/** The page's ```json blocks, in order: what the reader saves to a file. */
export function guideJsonBlocks(page: string): string[] {
  const text = readFileSync(`docs/guides/${page}`, 'utf8');
  return [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map(([, body = '']) => body);
}

const quoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** The script a run executes: the blocks (variables set, outside addresses replaced). */
export function guideScript(page: string, options: GuideRunOptions): string {
  const bodies = guideBlocks(page).map((block) => (block.skipped ? ':' : block.text));
  // each variable is set where the page first sets it (most pages: their first block)
  for (const [name, value] of Object.entries(options.variables)) {
    const line = new RegExp(`^${name}=.*$`, 'm');
    const index = bodies.findIndex((body) => line.test(body));
    if (index < 0) throw new Error(`${page}: no block sets ${name}`);
    bodies[index] = (bodies[index] ?? '').replace(line, () => `${name}=${quoted(value)}`);
  }
  let script = bodies.map((body, index) => `printf '\\n::block ${index}::\\n'\n${body}\n`).join('');
  for (const [from, to] of options.replace ?? []) {
    if (!script.includes(from)) throw new Error(`${page}: no "${from}" to replace`);
    script = script.replaceAll(from, to);
  }
  // curl as the page calls it, each answer ended by a newline (one per line in the outputs; a
  // command substitution drops it) and its status written on standard error (-w's %{stderr})
  const curl = `curl() { command curl -w '\\n%{stderr}::curl %{method} %{http_code} %{url_effective}\\n' "$@"; }\n`;
  const keep = (options.keep ?? [])
    .map((name) => `printf '::var ${name}=%s\\n' "\${${name}-}"\n`)
    .join('');
  return `${curl}${script}printf '\\n::vars::\\n'\n${keep}`;
}

export async function runGuide(page: string, options: GuideRunOptions): Promise<GuideRun> {
  const script = guideScript(page, options);
  const cwd = options.files ? await mkdtemp(join(tmpdir(), 'hookprompt-guide-')) : undefined;
  try {
    for (const [name, text] of Object.entries(options.files ?? {}))
      await writeFile(join(cwd as string, name), text);
    return await runScript(page, script, options, cwd);
  } finally {
    if (cwd) await rm(cwd, { recursive: true, force: true });
  }
}

async function runScript(
  page: string,
  script: string,
  options: GuideRunOptions,
  cwd: string | undefined,
): Promise<GuideRun> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  try {
    while (!exited) {
      await options.meanwhile?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } catch (error) {
    child.kill();
    throw error;
  }
  const code = await exit;
  if (code !== 0) {
    throw new Error(
      `${page}: bash exited with ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
    );
  }

  const [body = '', varsText = ''] = stdout.split('\n::vars::\n');
  // every block, skipped ones too, starts with its marker: the pieces are in the page's order
  const outputs = body.split(/\n::block \d+::\n/).slice(1);
  const vars = Object.fromEntries(
    [...varsText.matchAll(/^::var (\w+)=(.*)$/gm)].map(([, name, value]) => [name, value]),
  );
  const calls = [...stderr.matchAll(/^::curl (\S+) (\d+) (\S+)$/gm)].map(
    ([, method = '', status, url = '']) => ({ method, status: Number(status), url }),
  );
  const printed = (index: number) => {
    const output = outputs[index];
    if (output === undefined) throw new Error(`${page}: no block ${index}`);
    return output;
  };
  return { printed, calls, vars, stderr };
}

/** The JSON objects a block printed, in order (compact or pretty, as curl and jq print them). */
export function jsonObjects(output: string): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < output.length; i++) {
    const char = output[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) inString = true;
    else if (char === '{') {
      if (depth++ === 0) start = i;
    } else if (char === '}' && depth > 0 && --depth === 0) {
      objects.push(JSON.parse(output.slice(start, i + 1)) as Record<string, unknown>);
    }
  }
  return objects;
}

/** The API calls (under /api/v1) whose answer was not a 2xx: a page's command that is wrong. */
export function failedApiCalls(run: GuideRun): CurlCall[] {
  return run.calls.filter(
    (call) => new URL(call.url).pathname.startsWith('/api/v1/') && !/^2/.test(String(call.status)),
  );
}

/** The statuses of the calls whose method and URL path (without the query) match. */
export function statusesOf(run: GuideRun, method: string, path: RegExp): number[] {
  return run.calls
    .filter((call) => call.method === method && path.test(new URL(call.url).pathname))
    .map((call) => call.status);
}
