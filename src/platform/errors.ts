import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { ZodError } from 'zod';
import type { Logger } from './logger.js';
// Every ZodError turned into a problem below carries these readable messages.
import './validation-messages.js';

/** The one error type of the service: an HTTP status, a machine `code`, and words for people. */
export class AppError extends Error {
  override name = 'AppError';

  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string = title,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

/** A refused field of a request: its dotted path (`reply_delivery.url`; '' for the whole request). */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * A 400 `validation_failed` naming the refused fields: the API's body lists them in `errors`
 * (the detail says them in words), and the panel shows each beside its field (`fieldErrorsOf`).
 */
export function invalidFields(errors: FieldError[]): AppError {
  const detail = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ');
  return new AppError(400, 'validation_failed', 'Invalid request', detail, {}, { errors });
}

export const invalidField = (path: string, message: string): AppError =>
  invalidFields([{ path, message }]);

/** The refused fields of a `validation_failed` error, a ZodError's included; undefined for others. */
export function fieldErrorsOf(error: unknown): FieldError[] | undefined {
  const appError = error instanceof ZodError ? asAppError(error) : error;
  if (!(appError instanceof AppError) || appError.code !== 'validation_failed') return undefined;
  return (
    (appError.extra.errors as FieldError[] | undefined) ?? [{ path: '', message: appError.detail }]
  );
}

export const notFound = (what: string) =>
  new AppError(404, 'not_found', 'Not found', `${what} does not exist.`);

export const serviceUnavailable = () =>
  new AppError(
    503,
    'service_unavailable',
    'Service unavailable',
    'The database cannot be reached or did not answer in time; try again shortly.',
  );

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extension: string]: unknown;
}

export function toProblem(error: AppError): Problem {
  return {
    type: `urn:hookprompt:problem:${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...error.extra,
  };
}

/**
 * Answers `application/problem+json`, on any response: the Express routes' and the webhook
 * receiver's, which answers without Express. The headers are those Express's `res.type().send()`
 * gave; Node leaves the body out of an answer to HEAD.
 */
export function sendProblem(res: ServerResponse, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body = JSON.stringify(toProblem(error));
  res.statusCode = error.status;
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(body)));
  res.end(body);
}

/** Anything thrown, as the AppError to answer; server-side failures (5xx) are logged. */
export function reportedError(error: unknown, log: Logger): AppError {
  const appError = asAppError(error);
  if (appError.status >= 500) log.error({ err: error }, 'request failed');
  return appError;
}

/** Turns anything thrown into an AppError; unknown errors become a 500 that reveals nothing. */
export function asAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) {
    return invalidFields(
      error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    );
  }
  if (isDatabaseUnreachable(error)) return serviceUnavailable();
  const status = (error as { status?: unknown })?.status;
  // Errors raised by body parsers and the like carry a 4xx status and a safe message.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') {
      return new AppError(
        400,
        'invalid_json',
        'Invalid JSON',
        'The request body is not valid JSON.',
      );
    }
    if (type === 'entity.too.large') {
      return new AppError(
        413,
        'payload_too_large',
        'Payload too large',
        'The request body is too large.',
      );
    }
    return new AppError(status, 'bad_request', 'Bad request', 'The request could not be read.');
  }
  return new AppError(500, 'internal_error', 'Internal error', 'Something went wrong on our side.');
}

const UNREACHABLE_CODES = new Set([
  // a deadline of ours (src/db/database.ts), a statement or lock wait cancelled by the server
  'DATABASE_TIMEOUT',
  '57014',
  '55P03',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

export function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    message,
  );
}

/** The final error middleware: problem+json for the receiver and the API, HTML for the panel. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const appError = reportedError(error, log);
    if (res.headersSent) return;
    const wantsHtml =
      !/^\/(api|hooks)(\/|$)/.test(req.path) && req.accepts(['json', 'html']) === 'html';
    if (wantsHtml && res.app.get('view engine')) {
      for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
      res.status(appError.status).render('error', { title: appError.title, error: appError });
      return;
    }
    sendProblem(res, appError);
  };
}
