/**
 * Tool use as the providers' protocols carry it, in one shape of the service's own: what is
 * offered, what the model asked for, and the rounds so far. Every value here is plain JSON, so a
 * conversation can be stored and taken up again; each provider writes it in its kind's shape
 * (chat-request.ts, anthropic-request.ts), so a fallback of another kind can carry it on.
 */

/** A tool as the model is offered it. */
export interface OfferedTool {
  name: string;
  description: string;
  /** A JSON Schema of an object. */
  parameters: Record<string, unknown>;
}

/** One call the model asked for. */
export interface ModelToolCall {
  /** The provider's id of the call, sent back with its result. */
  id: string;
  name: string;
  /** The arguments as the model sent them (their text). */
  argumentsText: string;
}

/** The result given back for one call. */
export interface ToolResultMessage {
  id: string;
  content: string;
  isError: boolean;
}

/** One round: the model's answer that asked for tools, and the result of each call it made. */
export interface ToolRound {
  /** The text the model wrote beside its calls (null when none). */
  text: string | null;
  calls: ModelToolCall[];
  results: ToolResultMessage[];
}

/** Whether the model may call the tools offered (`auto`) or must answer (`none`). */
export type ToolChoice = 'auto' | 'none';

/** What a request carries of tool use; absent, the call offers no tools. */
export interface ToolOffer {
  tools: OfferedTool[];
  choice: ToolChoice;
  /** Oldest first: each is sent back as the model's answer, then the results. */
  rounds: ToolRound[];
}
