import express, { type RequestHandler } from 'express';
import { AppError } from '../platform/errors.js';
import { isJsonMediaType } from '../hooks/media-type.js';

/** Room for the largest request the management API takes (a channel with a long template). */
const API_BODY_LIMIT = '1mb';

/**
 * Reads JSON request bodies of the management API, a body without Content-Type included (as the
 * receiver does); anything else that carries a body, such as the form curl sends for `-d` without
 * a header, is refused with words that say what to send instead.
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({
    limit: API_BODY_LIMIT,
    type: (req) => isJsonMediaType(req.headers['content-type']),
  });
  const refuseOtherBodies: RequestHandler = (req, _res, next) => {
    if (hasBody(req.headers) && !isJsonMediaType(req.headers['content-type']))
      throw sendJson(String(req.headers['content-type']));
    next();
  };
  return [parse, refuseOtherBodies];
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0;
}

const sendJson = (contentType: string) =>
  new AppError(
    415,
    'unsupported_media_type',
    'Send JSON',
    `Send JSON: the body must be a JSON object with the header Content-Type: application/json, ` +
      `not ${contentType} (with curl: -H 'Content-Type: application/json' -d '{...}').`,
  );
