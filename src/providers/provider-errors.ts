import { AppError } from '../platform/errors.js';

/** The refusals of the providers API, by the `code` they carry. */
export const providerErrors = {
  nameTaken: (name: string) =>
    new AppError(
      409,
      'provider_name_taken',
      'Provider name taken',
      name === 'default'
        ? 'The name "default" is the server\'s own provider; choose another.'
        : `This workspace already has a provider named "${name}".`,
    ),
  readOnly: () =>
    new AppError(
      409,
      'provider_read_only',
      'Provider read-only',
      "The default provider is the server's AI_* configuration; it cannot be changed or deleted here.",
    ),
  /** Channels name providers; a provider they name is not deleted or renamed under them. */
  inUse: (name: string, channels: readonly string[]) =>
    new AppError(
      409,
      'provider_in_use',
      'Provider in use',
      `The provider "${name}" is named by ${channels.length === 1 ? 'the channel' : 'the channels'} ` +
        `${channels.map((channel) => `"${channel}"`).join(', ')} (ai.provider or ai.fallbacks); ` +
        'choose another provider there first.',
      {},
      { channels },
    ),
  unknown: (names: readonly string[]) =>
    new AppError(
      400,
      'unknown_provider',
      'Unknown provider',
      `This workspace has no provider named ${names.map((name) => `"${name}"`).join(', ')}.`,
      {},
      { providers: names },
    ),
};
