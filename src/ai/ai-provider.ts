/** Something that turns a prompt into a reply: the offline echo stand-in or a real model. */
export interface AiProvider {
  readonly name: string;
  /**
   * Resolves to the reply. Rejects with an AiError when the model gave no usable answer, or with
   * `signal.reason` when the caller aborted (the worker is shutting down).
   */
  complete(prompt: string, signal: AbortSignal): Promise<string>;
}

/**
 * Why a reply could not be had. `retryable` says whether asking again later may help (timeouts,
 * network errors, an overloaded server) or not (a wrong key, a request the server refuses).
 * The message is shown to admins in Brain Logs, so it never contains the API key.
 */
export class AiError extends Error {
  override name = 'AiError';

  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
