// The one place that turns errors into responses: the SPEC 7 envelope, never a stack trace or SQL.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DbError } from '../db/index.ts';
import { SikaError, errors, type FieldError } from '../lib/errors.ts';
import { errorHeaders, statusOf } from './errors.ts';
import { patternMessage } from './schemas.ts';

export interface ErrorEnvelope {
  error: { code: string; message: string; retry_after_seconds?: number; fields?: FieldError[]; detail?: string };
}

export function envelope(error: SikaError): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details.retryAfterSeconds !== undefined
        ? { retry_after_seconds: error.details.retryAfterSeconds }
        : {}),
      ...(error.details.fields ? { fields: error.details.fields } : {}),
      ...(error.details.detail ? { detail: error.details.detail } : {}),
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
    // A `false` property schema (a field another field rules out, e.g. a phone on a bank recipient): Ajv says "boolean schema is false".
    if (issue.keyword === 'false schema') return { field: where, message: 'is not allowed here' };
    const explained = issue.keyword === 'pattern' ? patternMessage(String(issue.params?.pattern)) : undefined;
    if (explained) return { field: where, message: explained };
    return { field: where, message: issue.message ?? 'is invalid' };
  });
}

// Plain Errors busboy (multipart) throws for a malformed body: client errors, not 500s.
const MALFORMED_MULTIPART =
  /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|The needle cannot (be an empty String\/Buffer|have a length bigger than 256)\.)$/;

/** Maps anything thrown to a SikaError; unknown errors become a generic INTERNAL. */
export function toSikaError(error: unknown, contentType?: string): SikaError {
  if (error instanceof SikaError) return error;
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
      return errors.payloadTooLarge();
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
    const code =
      statusCode === 413
        ? 'PAYLOAD_TOO_LARGE'
        : statusCode === 414
          ? 'URI_TOO_LONG'
          : statusCode === 415
            ? 'UNSUPPORTED_MEDIA_TYPE'
            : 'INVALID_ARGUMENT';
    const message = typeof e.message === 'string' && e.message.length < 300 ? e.message : 'The request is invalid.';
    return new SikaError(code, message);
  }
  return errors.internal();
}

/** The one JSON error renderer: the status from the code, Retry-After when known, the envelope. */
export function sendError(reply: FastifyReply, error: SikaError): FastifyReply {
  return reply
    .code(statusOf(error))
    .headers(errorHeaders(error))
    .type('application/json; charset=utf-8')
    .send(envelope(error));
}

/** Logs a failed request: the whole error for a 5xx (never sent), one line otherwise. */
export function logRequestError(
  request: FastifyRequest,
  error: unknown,
  problem: SikaError,
  what = 'request failed',
): void {
  const status = statusOf(problem);
  if (status >= 500) request.log.error({ err: error }, what);
  else request.log.info({ code: problem.code, status }, problem.message);
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const problem = toSikaError(error, request.headers['content-type']);
    logRequestError(request, error, problem);
    return sendError(reply, problem);
  });
}
