import { AppError } from '../platform/errors.js';

/** The refusals of the tools API, by the `code` they carry. */
export const toolErrors = {
  nameTaken: (name: string) =>
    new AppError(
      409,
      'tool_name_taken',
      'Tool name taken',
      `This workspace already has a tool named "${name}".`,
    ),
  /** Channels name tools; a tool they name is not deleted or renamed under them. */
  inUse: (name: string, channels: readonly string[]) =>
    new AppError(
      409,
      'tool_in_use',
      'Tool in use',
      `The tool "${name}" is named by ${channels.length === 1 ? 'the channel' : 'the channels'} ` +
        `${channels.map((channel) => `"${channel}"`).join(', ')} (ai.tools); ` +
        'take it out of their tools first.',
      {},
      { channels },
    ),
  unknown: (names: readonly string[]) =>
    new AppError(
      400,
      'unknown_tool',
      'Unknown tool',
      `This workspace has no tool named ${names.map((name) => `"${name}"`).join(', ')}.`,
      {},
      { tools: names },
    ),
};
