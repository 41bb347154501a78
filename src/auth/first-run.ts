import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../platform/config.js';
import type { ApiKeysService } from '../workspaces/api-keys-service.js';

/** Where the first API key is written, beside the first admin's password in DATA_DIR. */
export const INITIAL_API_KEY_FILE = 'initial-api-key';

export interface FirstRunServices {
  config: Pick<
    Config,
    'adminApiKey' | 'databaseUrl' | 'dataDir' | 'role' | 'ai' | 'delivery' | 'tools'
  >;
  apiKeys: ApiKeysService;
  readonly defaultWorkspaceId: string;
}

/**
 * The way from a first `npm start` to a first reply without a second start: while the default
 * workspace has no API key at all (and ADMIN_API_KEY is unset), a key is made and written beside
 * the first admin's password (embedded database in DATA_DIR only, never over an existing file),
 * and copy-ready commands that create a channel and post to it are returned for the terminal.
 * Once a key exists this returns nothing: the text appears on the first start only.
 */
export async function firstRunGuide(
  services: FirstRunServices,
  port: number,
): Promise<string | undefined> {
  const { config, apiKeys, defaultWorkspaceId } = services;
  if (config.role === 'worker' || config.adminApiKey) return undefined;
  if ((await apiKeys.list(defaultWorkspaceId)).length > 0) return undefined;
  const api = `http://localhost:${port}`;
  if (config.databaseUrl !== undefined) {
    return guide(
      api,
      [
        `No API key exists yet: make one on ${api}/workspace (or set ADMIN_API_KEY), then`,
        `  KEY=<the key>`,
      ],
      'This text is shown until the default workspace has an API key.',
      onThisMachine(config),
    );
  }
  const file = resolve(join(config.dataDir, INITIAL_API_KEY_FILE));
  const { key } = await apiKeys.create(defaultWorkspaceId, 'First key (initial-api-key file)');
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return guide(
    api,
    [
      `An API key for the management API was made and written to ${file}:`,
      `  KEY=$(cat '${file}')`,
    ],
    'This text is shown on the first start only.',
    onThisMachine(config),
  );
}

/**
 * A laptop's model (Ollama, vLLM) or receiver sits on a loopback or private address, which the
 * service refuses by default: one switch lets them all, said before the first refusal.
 */
function onThisMachine(config: FirstRunServices['config']): string[] {
  const { ai, delivery, tools } = config;
  if (ai.providersAllowPrivate && delivery.allowPrivate && tools.allowPrivate) return [];
  return [
    '',
    'A model, a tool or a receiver on this machine or network (Ollama, vLLM, a test server)?',
    'Start with ALLOW_PRIVATE_NETWORK=true to let providers, tools and deliveries reach them.',
  ];
}

function guide(api: string, key: string[], when: string, local: string[]): string {
  const channel = {
    name: 'First channel',
    template: 'Write a one-line thank-you note to {{customer.name}} for order {{order.id}}.',
  };
  return [
    '',
    `hookprompt is running at ${api}. A first event and its reply, from a shell:`,
    '',
    ...key,
    `  URL=$(curl -s ${api}/api/v1/channels -H "Authorization: Bearer $KEY" \\`,
    `    -H 'Content-Type: application/json' -d '${JSON.stringify(channel)}' \\`,
    `    | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).webhook_url')`,
    `  curl -s "$URL?wait=10" -H 'Content-Type: application/json' \\`,
    `    -d '{"order":{"id":1042},"customer":{"name":"Ada"}}'`,
    '',
    `Brain Logs: ${api}/logs (sign in at ${api}/login). ${when}`,
    ...local,
    '',
  ].join('\n');
}
