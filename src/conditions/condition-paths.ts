import { placeholderOf, type Placeholder } from '../template/index.js';

/**
 * Where a condition's path reads: `payload.<p>` (the webhook's payload, as `{{p}}` renders it);
 * a destination's `when` adds `status` and `json.<p>` (the reply parsed) by naming them here.
 */
export type PathScope = 'payload' | 'status' | 'json';

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
    return `must start with ${scopes.map((s) => (s === 'status' ? s : `${s}.`)).join(' or ')}`;
  }
  if (scope === 'status') return dot < 0 ? { scope } : 'status has no fields';
  const rest = dot < 0 ? '' : path.slice(dot + 1).trim();
  if (rest === '') return `must name a field: ${scope}.<path>`;
  return { scope, placeholder: placeholderOf(rest) };
}
