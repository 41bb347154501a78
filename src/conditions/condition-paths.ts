import { placeholderOf, type Placeholder } from '../template/index.js';

/**
 * Where a condition's path reads: `payload.<p>` (the webhook's payload, as `{{p}}` renders it);
 * a destination's `when` adds `status` and `json.<p>` (the reply parsed) by naming them here; a
 * trial's checks read `status`, `reply` (the reply's text, whole) and `reply.<p>` (a member of
 * the reply parsed as JSON).
 */
export type PathScope = 'payload' | 'status' | 'json' | 'reply';

/** Scopes a path may name alone: `status`, and the reply's whole text. */
const WHOLE: readonly PathScope[] = ['status', 'reply'];

/** A path taken apart: its scope, and the placeholder it reads within the scope's value. */
export interface ConditionPath {
  scope: PathScope;
  /** Absent for a scope read whole (`status`). */
  placeholder?: Placeholder;
}

/** The path, or why it is not one of the scopes allowed. */
export function parseConditionPath(
  path: string,
  scopes: readonly PathScope[],
): ConditionPath | string {
  const dot = path.indexOf('.');
  const scope = (dot < 0 ? path : path.slice(0, dot)) as PathScope;
  if (!scopes.includes(scope)) {
    const named = scopes.flatMap((s) =>
      s === 'status' ? [s] : s === 'reply' ? [s, `${s}.`] : [`${s}.`],
    );
    return `must start with ${named.join(' or ')}`;
  }
  if (scope === 'status') return dot < 0 ? { scope } : 'status has no fields';
  if (dot < 0 && WHOLE.includes(scope)) return { scope };
  const rest = dot < 0 ? '' : path.slice(dot + 1).trim();
  if (rest === '') return `must name a field: ${scope}.<path>`;
  return { scope, placeholder: placeholderOf(rest) };
}
