import type { Intake } from '../intake.js';

/**
 * Slack's Events API proves a request URL with `{"type": "url_verification", "challenge": C}`,
 * signed like every event, and expects `C` back. On a channel verified with the `slack` scheme
 * (so the signature was checked by now) such a request is answered `200 {"challenge": C}` and
 * stored nowhere. Other channels treat it as any payload.
 */
export function findSlackChallenge(intake: Intake): void {
  const { channel, text } = intake;
  if (!intake.http || channel.verification.scheme !== 'slack') return;
  if (text === undefined || !text.includes('url_verification')) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  const { type, challenge } = body as { type?: unknown; challenge?: unknown };
  if (type === 'url_verification' && typeof challenge === 'string') intake.challenge = challenge;
}
