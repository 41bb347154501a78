import { Router } from 'express';
import { z } from 'zod';
import { notFound } from './errors.js';

/**
 * The shape of every row id the API and the panel accept: a positive bigint, written without
 * sign or leading zero, of at most 18 digits, so that `::bigint` always takes it.
 */
export const ROW_ID = /^[1-9]\d{0,17}$/;

/** A row id given as text (a path, a query string, a form field, a JSON string). */
export const rowId = (message = 'must be an id') => z.string().regex(ROW_ID, message);

/** The one check of an id in a path. */
const pathIdSchema = rowId();

/**
 * Whether a value is a row id: for the ids a route reads itself (a form field, a query value, a
 * path part it must check in its own order, as the receiver's after its token).
 */
export const isRowId = (value: unknown): value is string => pathIdSchema.safeParse(value).success;

/** The id parameters of the API's and the panel's paths, each with what it names. */
const PATH_IDS = {
  channelId: 'This channel',
  eventId: 'This event',
  trialId: 'This trial',
  providerId: 'This provider',
  alertId: 'This alert',
  keyId: 'This API key',
  adminId: 'This admin',
  invitationId: 'This invitation',
  destinationId: 'This destination',
  toolId: 'This tool',
} as const;

export type PathIdName = keyof typeof PATH_IDS;

/**
 * A router whose id parameters (`:channelId`, `:eventId`, ... above) are checked before any of
 * its handlers runs: one that is not a row id answers 404 as an unknown one does (problem+json
 * for the API, the error page for the panel), so services only ever see ids SQL can take.
 * `names` are what a parameter takes besides row ids (the built-in provider's `default`).
 */
export function idRouter(names: Partial<Record<PathIdName, readonly string[]>> = {}): Router {
  const router = Router();
  for (const [param, what] of Object.entries(PATH_IDS)) {
    const named = names[param as PathIdName] ?? [];
    router.param(param, (_req, _res, next, value: string) => {
      if (!named.includes(value) && !isRowId(value)) throw notFound(what);
      next();
    });
  }
  return router;
}
