import type { GuardSettings } from './guard-settings.js';
import { Redactor, restorePlaceholders, type RedactorNumbering } from './redactor.js';
import { escapeBoundaries, Spotlight } from './spotlight.js';

/** An earlier exchange of a thread, with the placeholders its own call sent (to read it whole). */
export interface GuardedTurn {
  prompt: string;
  reply: string;
  sent?: Readonly<Record<string, string>> | null;
}

/**
 * An event's guardrails as plain JSON: its spotlight tag and redaction numbering, so a
 * conversation parked for an approval goes on with the same tags and numbers.
 */
export interface GuardState {
  tag: string | null;
  numbering: RedactorNumbering | null;
}

/** What one AI call sends, as far as the guardrails are concerned. */
export interface GuardedTexts {
  system?: string;
  history: readonly { prompt: string; reply: string }[];
  prompt: string;
}

/**
 * The guardrails of one event: the spotlight's tags (drawn once per event) for rendering, then
 * redaction of everything sent, and the restoring of the reply. Undefined when the channel has
 * none, so events without guardrails pay nothing.
 */
export class EventGuard {
  private readonly redactor: Redactor | undefined;
  private readonly spotlight: Spotlight | undefined;
  private readonly restores: boolean;

  private constructor(settings: GuardSettings, state?: GuardState) {
    this.redactor = settings.redact?.length
      ? new Redactor(settings.redact, state?.numbering ?? undefined)
      : undefined;
    this.spotlight = settings.spotlight ? new Spotlight(state?.tag ?? undefined) : undefined;
    this.restores = settings.restore === true && this.redactor !== undefined;
  }

  /** `state`: the guardrails an event had when its conversation was parked, taken up again. */
  static of(settings: GuardSettings, state?: GuardState): EventGuard | undefined {
    return settings.redact?.length || settings.spotlight
      ? new EventGuard(settings, state)
      : undefined;
  }

  /** The tag and numbering so far (to park the conversation). */
  state(): GuardState {
    return {
      tag: this.spotlight?.tag ?? null,
      numbering: this.redactor?.numbering() ?? null,
    };
  }

  /** For renderTemplate: wraps each value in the data tags; undefined without the spotlight. */
  get wrapValue(): ((value: string) => string) | undefined {
    return this.spotlight?.wrap;
  }

  /** The spotlight's tag (`data-R`, drawn for this event); undefined without the spotlight. */
  get spotlightTag(): string | undefined {
    return this.spotlight?.tag;
  }

  /** A rendered prompt without its data tags: blank when the values put in were blank. */
  unwrapped(prompt: string): string {
    return this.spotlight ? this.spotlight.unwrap(prompt) : prompt;
  }

  /**
   * The texts as sent: the spotlight's sentence before the system prompt, and every text
   * redacted in the order sent. History turns are read whole (their own placeholders put back)
   * and redacted again with this event's numbering; under the spotlight, tags in them are inert.
   */
  guard<T extends GuardedTexts>(request: T, earlier: readonly GuardedTurn[] = []): T {
    const redact = (text: string) => (this.redactor ? this.redactor.redact(text) : text);
    const system = this.spotlight ? this.spotlight.systemMessage(request.system) : request.system;
    const guardedSystem = system === undefined ? undefined : redact(system);
    const inert = (text: string) => (this.spotlight ? escapeBoundaries(text) : text);
    const history = request.history.map((turn, i) => {
      const sent = earlier[i]?.sent;
      const whole = (text: string) => (sent ? restorePlaceholders(text, sent) : text);
      return { prompt: redact(inert(whole(turn.prompt))), reply: redact(inert(whole(turn.reply))) };
    });
    return { ...request, system: guardedSystem, history, prompt: redact(request.prompt) } as T;
  }

  /**
   * A tool's result as the model is given it: data from outside, so wrapped in the event's data
   * tags under the spotlight, then redacted, continuing the event's numbering.
   */
  toolResult(text: string): string {
    const wrapped = this.spotlight ? this.spotlight.wrap(text) : text;
    return this.redactor ? this.redactor.redact(wrapped) : wrapped;
  }

  /**
   * A call's arguments (JSON text) as the tool gets them: the placeholders this event sent put
   * back to their values, whatever the channel's `restore` (the tool needs the real values).
   */
  toolArguments(argumentsText: string): string {
    return this.redactor?.sent.size
      ? restorePlaceholders(argumentsText, this.redactor.sent, true)
      : argumentsText;
  }

  /** `{kind: distinct values}` redacted for this event; null when nothing is redacted. */
  redactions(): Record<string, number> | null {
    return this.redactor ? this.redactor.counts() : null;
  }

  /** The placeholders sent and their values (to read this event whole as a later one's history). */
  sentValues(): Record<string, string> | null {
    return this.redactor?.sent.size ? Object.fromEntries(this.redactor.sent) : null;
  }

  /** The reply with the placeholders sent put back, when the channel asks for it. */
  restore(reply: string, inJson: boolean): string {
    return this.restores && this.redactor
      ? restorePlaceholders(reply, this.redactor.sent, inJson)
      : reply;
  }
}
