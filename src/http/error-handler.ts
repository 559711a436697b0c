// The one place that turns errors into responses: the SPEC 7 envelope, never a stack trace or SQL.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DbError } from '../db/index.ts';
import { AppError, errors, type FieldError } from './errors.ts';

export interface ErrorEnvelope {
  error: { code: string; message: string; retry_after_seconds?: number; fields?: FieldError[]; detail?: string };
}

export function envelope(error: AppError): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.extra.retryAfterSeconds !== undefined ? { retry_after_seconds: error.extra.retryAfterSeconds } : {}),
      ...(error.extra.fields ? { fields: error.extra.fields } : {}),
      ...(error.extra.detail ? { detail: error.extra.detail } : {}),
    },
  };
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
  keyword?: string;
}

function fieldErrors(validation: ValidationIssue[], context: string | undefined): FieldError[] {
  return validation.slice(0, 20).map((issue) => {
    let field = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
      field = field ? `${field}.${issue.params.missingProperty}` : issue.params.missingProperty;
    }
    const where = field || context || 'body';
    return { field: where, message: issue.message ?? 'is invalid' };
  });
}

// Plain Errors busboy (multipart) throws for a malformed body: client errors, not 500s.
const MALFORMED_MULTIPART = /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|The needle cannot (be an empty String\/Buffer|have a length bigger than 256)\.)$/;

/** Maps anything thrown to an AppError; unknown errors become a generic 500. */
export function toAppError(error: unknown, contentType?: string): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof DbError) return error.isUnavailable ? errors.unavailable() : errors.internal();
  const e = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (e?.validation) {
    const fields = fieldErrors(e.validation, e.validationContext);
    const first = fields[0];
    const message = first ? `${first.field} ${first.message}` : 'The request is invalid.';
    return errors.invalidArgument(message, fields);
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError(413, 'PAYLOAD_TOO_LARGE', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(contentType ? contentType.slice(0, 100) : 'of this request');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidArgument('The JSON body is empty.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return errors.invalidArgument('The multipart body is malformed.');
  }
  if (e instanceof Error && e.statusCode === undefined && MALFORMED_MULTIPART.test(e.message)) {
    return errors.invalidArgument('The multipart body is malformed.');
  }
  const statusCode = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (statusCode >= 400 && statusCode < 500) {
    // Fastify and plugin client errors (bad content length, malformed multipart, ...): safe messages.
    const code = statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_ARGUMENT';
    const message = typeof e.message === 'string' && e.message.length < 300 ? e.message : 'The request is invalid.';
    return new AppError(statusCode === 404 || statusCode === 405 ? 400 : statusCode, code, message);
  }
  return errors.internal();
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.extra.headers) reply.headers(error.extra.headers);
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(envelope(error));
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error, request.headers['content-type']);
    if (appError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: appError.code, status: appError.statusCode }, appError.message);
    return sendError(reply, appError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url.split('?')[0]!.slice(0, 200))));
}
