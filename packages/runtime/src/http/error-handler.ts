import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ValidationError, zodIssues } from '@icepack/types';
import { ZodError } from 'zod';
import { HttpError } from './http-errors.ts';

/** One invalid field of a request body: `path` is dotted (`spark.executorCores`). */
interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

/** Answers unknown routes with a JSON 404 rather than express's HTML page. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ error: 'not_found', message: `no route for ${req.method} ${req.path}` });
};

/**
 * Turns errors into JSON: 400 with the invalid fields for validation errors (ours or
 * zod's), the status of an {@link HttpError}, 500 otherwise. Stack traces go to the log,
 * never to the client.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const fields = validationFields(error);
    if (fields !== undefined) {
      res.status(400).json({ error: 'validation_failed', message: describe(fields), fields });
      return;
    }
    if (error instanceof HttpError) {
      res.status(error.status).json({ error: codeFor(error.status), message: error.message });
      return;
    }
    const tooLarge = bodyTooLarge(error);
    if (tooLarge !== undefined) {
      res.status(413).json({
        error: 'payload_too_large',
        message: `request body is larger than the limit of ${String(tooLarge)} bytes`,
        limit: tooLarge,
      });
      return;
    }
    if (isBodyParseError(error)) {
      res.status(400).json({ error: 'invalid_json', message: 'request body is not valid JSON' });
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, 'request failed');
    res.status(500).json({ error: 'internal', message: 'internal error' });
  };
}

function validationFields(error: unknown): readonly FieldProblem[] | undefined {
  const issues =
    error instanceof ValidationError
      ? error.issues
      : error instanceof ZodError
        ? zodIssues(error)
        : undefined;
  return issues?.map((issue) => ({ path: issue.path, message: issue.message }));
}

function describe(fields: readonly FieldProblem[]): string {
  return fields.map((field) => `${field.path || '(body)'}: ${field.message}`).join('; ');
}

/** body-parser's `entity.too.large`: the limit in bytes, else undefined. */
function bodyTooLarge(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, limit } = error as { type?: unknown; limit?: unknown };
  return type === 'entity.too.large' && typeof limit === 'number' ? limit : undefined;
}

function isBodyParseError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { type?: unknown }).type === 'entity.parse.failed'
  );
}

function codeFor(status: number): string {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    default:
      return status >= 500 ? 'internal' : 'bad_request';
  }
}
