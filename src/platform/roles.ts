import { z } from 'zod';
import { AppError } from './errors.js';

/**
 * The roles an admin or an API key has in a workspace, weakest first: a viewer reads, an editor
 * also changes channels and events, an owner also everything else (docs/roles.md lists each
 * route's role, generated from the policy tables of the API and the panel).
 */
export const ROLES = ['viewer', 'editor', 'owner'] as const;

export type Role = (typeof ROLES)[number];

export const roleSchema = z.enum(ROLES, { message: 'must be one of owner, editor or viewer' });

/** Whether `role` may do what needs `required`. */
export const hasRole = (role: Role, required: Role): boolean =>
  ROLES.indexOf(role) >= ROLES.indexOf(required);

/** The answer to a request its caller's role does not allow: which role it needs, in words too. */
export const forbiddenRole = (required: Role, role: Role): AppError =>
  new AppError(
    403,
    'forbidden_role',
    'Not allowed for your role',
    `This needs the ${required} role in this workspace; yours is ${role}.`,
    {},
    { required_role: required },
  );

/** The answer to taking the last owner out of a workspace or giving them another role. */
export const lastOwner = (): AppError =>
  new AppError(
    409,
    'last_owner',
    'Last owner',
    "This is the workspace's only owner; make another admin an owner first.",
  );
