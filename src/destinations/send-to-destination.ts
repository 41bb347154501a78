import { renderTemplate, type JsonValue } from '../template/index.js';
import type { DestinationKind, DestinationSettings } from './destination-schemas.js';
import type {
  DestinationMessage,
  DestinationTransport,
  DestinationOutcome,
  SendOptions,
  TransportDeps,
} from './destination-transport.js';
import { discordTransport } from './discord-transport.js';
import { slackTransport } from './slack-transport.js';
import { teamsTransport } from './teams-transport.js';
import { telegramTransport } from './telegram-transport.js';
import { webhookTransport } from './webhook-transport.js';

/** The one transport of each kind. */
export const TRANSPORTS: Readonly<Record<DestinationKind, DestinationTransport>> = {
  webhook: webhookTransport,
  slack: slackTransport,
  telegram: telegramTransport,
  discord: discordTransport,
  teams: teamsTransport,
};

const EMPTY: JsonValue = new Map();
/** As long as a reply URL may be. */
const TARGET_MAX_CHARS = 2000;

/**
 * Sends one rendered message to one destination, once (no retry here: the caller's queue
 * retries on its schedule), and says what came of it and where it went. The destination's
 * templated fields (`chat_id`, `thread_ts` ...) are rendered over `options.payload`. Rejects
 * only when `options.signal` aborts; every other failure is an outcome.
 */
export async function sendToDestination(
  deps: TransportDeps,
  settings: DestinationSettings,
  message: DestinationMessage,
  options: SendOptions = {},
): Promise<DestinationOutcome> {
  const payload = options.payload ?? EMPTY;
  const fields: Record<string, string> = {};
  for (const [name, template] of Object.entries(settings.fields))
    fields[name] = renderTemplate(template, payload).trim();
  const transport = TRANSPORTS[settings.kind];
  const outcome = await transport.send({
    settings,
    fields,
    message,
    deps,
    partsDone: options.partsDone ?? 0,
    signal: options.signal,
    now: options.now ?? new Date(),
  });
  return { ...outcome, target: shownTarget(transport.target({ settings, fields, deps })) };
}

/** A target as stored: a field rendered from the payload may be long, or hold a NUL. */
function shownTarget(target: string | null): string | null {
  if (target === null) return null;
  const text = target.replaceAll('\u0000', '\uFFFD');
  return text.length > TARGET_MAX_CHARS ? `${text.slice(0, TARGET_MAX_CHARS)}…` : text;
}
