import type { RequestHandler, Response } from 'express';
import { forbiddenRole, hasRole, type Role } from './roles.js';

/**
 * What a route needs: a role in the workspace being managed; `signed_in`, any signed-in admin
 * (their account, a new workspace of their own); `public`, nobody (sign-in, the API's
 * description).
 */
export type Requirement = Role | 'signed_in' | 'public';

/** One line of a policy table: a method and a route pattern as the router has it. */
export interface RoleRule {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The whole path from the root, with Express's parameters: `/api/v1/channels/:channelId`. */
  path: string;
  role: Requirement;
}

/** What a request no rule matches needs: the most, so that a forgotten rule refuses, never lets in. */
export const UNMATCHED: Requirement = 'owner';

/** Writes the rules of one table: `ruleUnder('/api/v1')('GET', '/channels', 'viewer')`. */
export const ruleUnder =
  (prefix: string) =>
  (method: RoleRule['method'], path: string, role: RoleRule['role']): RoleRule => ({
    method,
    path: prefix + path,
    role,
  });

const segmentsOf = (path: string) => path.replace(/\/+$/, '').split('/');
const isParam = (segment: string) => segment.startsWith(':');

/** Literal segments before parameters, position by position: `/alerts/secret` before `/alerts/:alertId`. */
function bySpecificity(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = Number(isParam(a[i] as string)) - Number(isParam(b[i] as string));
    if (order !== 0) return order;
  }
  return 0;
}

/** A policy table, matched the way the router matches its routes (a parameter is one segment). */
export class RolePolicy {
  private readonly compiled: { rule: RoleRule; segments: string[] }[];

  constructor(readonly rules: readonly RoleRule[]) {
    this.compiled = rules
      .map((rule) => ({ rule, segments: segmentsOf(rule.path) }))
      .sort((a, b) => bySpecificity(a.segments, b.segments));
  }

  /** The rule of a request (`HEAD` is a `GET`), or undefined when none matches. */
  ruleFor(method: string, path: string): RoleRule | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const parts = segmentsOf(path);
    return this.compiled.find(
      ({ rule, segments }) =>
        rule.method === wanted &&
        segments.length === parts.length &&
        segments.every((s, i) => (isParam(s) ? parts[i] !== '' : s === parts[i])),
    )?.rule;
  }

  /** The rule written for exactly this route (parameters compared by place, not by name). */
  ruleOf(method: string, path: string): RoleRule | undefined {
    const shape = (p: string) => p.replace(/:\w+/g, ':');
    return this.rules.find(
      (rule) => rule.method === method.toUpperCase() && shape(rule.path) === shape(path),
    );
  }

  /**
   * The one middleware that checks a request against the table before its route runs. `roleOf`
   * says the caller's role in the workspace, or undefined when there is no workspace to act on
   * (a panel admin who belongs to none: the page itself answers that).
   */
  gate(roleOf: (res: Response) => Role | undefined): RequestHandler {
    return (req, res, next) => {
      const required = this.ruleFor(req.method, req.baseUrl + req.path)?.role ?? UNMATCHED;
      const role = roleOf(res);
      if (required === 'public' || required === 'signed_in' || role === undefined) return next();
      if (!hasRole(role, required)) throw forbiddenRole(required, role);
      next();
    };
  }

  /** Whether a role may send this request: what the panel asks before it shows a button. */
  allows(role: Role | undefined, method: string, path: string): boolean {
    const required = this.ruleFor(method, path)?.role ?? UNMATCHED;
    if (required === 'public' || required === 'signed_in') return true;
    return role !== undefined && hasRole(role, required);
  }
}
