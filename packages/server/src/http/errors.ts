import type { ErrorRequestHandler, Request } from 'express';
import { ERROR_CODES, type ErrorCode } from '../domain/error-codes.js';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import { isStorageUnavailable } from '../domain/storage-errors.js';
import type { Logger } from '../logger.js';

export interface ApiError {
  status: number;
  body: { error: string; code: ErrorCode; data?: Record<string, unknown> };
  headers: Record<string, string>;
}

/** What express-openapi-validator throws: a status and one entry per problem. */
interface ValidatorError {
  status: number;
  message: string;
  headers?: Record<string, string>;
  errors: { path: string; message: string; errorCode?: string }[];
}

function isValidatorError(error: unknown): error is ValidatorError {
  const candidate = error as Partial<ValidatorError>;
  return typeof candidate?.status === 'number' && Array.isArray(candidate.errors);
}

const PROJECT_HEADER_PATH = '/headers/x-service-project-id';

function fromValidator(error: ValidatorError, req: Request): DomainError {
  switch (error.status) {
    case 404:
      return new DomainError('route_not_found', `no route ${req.method} ${req.path}`, { target: req.path });
    case 405:
      return new DomainError('method_not_allowed', `method ${req.method} is not allowed on ${req.path}`, {
        allow: error.headers?.Allow ?? '',
      });
    case 413:
      return new DomainError('request_body_too_large', 'the request body is too large');
    case 415:
      return new DomainError(
        'unsupported_media_type',
        `unsupported content type ${req.get('content-type') ?? '(none)'}`,
      );
    case 400:
      return fromBadRequest(error, req);
    default:
      // Response validation failures (tests turn it on) and anything unexpected.
      return new DomainError('internal_error', 'internal error');
  }
}

function undecodablePath(): DomainError {
  const reason = 'is not valid percent-encoded UTF-8';
  return new DomainError('invalid_route_variable', `the path ${reason}`, { reason });
}

/**
 * `not a pipeline id: 123` (`not an event id: 123`) for a malformed `{id}` of a route such as `/pipelines/id/{id}`: the
 * collection before `/id/` names the kind. The pattern the validator quotes tells a reader less.
 */
function malformedIdMessage(variable: string, req: Request): string | undefined {
  const { openapi } = req as { openapi?: { openApiRoute?: string; pathParams?: Record<string, string> } };
  const kind = /\/([a-z_]+)s\/id\/\{id\}/.exec(openapi?.openApiRoute ?? '')?.[1];
  const value = openapi?.pathParams?.[variable];
  if (variable !== 'id' || !kind || value === undefined) return undefined;
  // Escaped as in JSON, without the quotes, and cut: the value is anything the client sent.
  const shown = JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}...` : value).slice(1, -1);
  const noun = kind.replaceAll('_', ' ');
  return `not ${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun} id: ${shown}`;
}

function fromBadRequest(error: ValidatorError, req: Request): DomainError {
  const problems = error.errors;
  const header = problems.find((p) => p.path.toLowerCase() === PROJECT_HEADER_PATH);
  if (header?.errorCode === 'required.openapi.validation') {
    return new DomainError('missing_project_id', 'the X-Service-Project-Id header is required on this route');
  }
  if (header)
    return new DomainError('unknown_project', 'the X-Service-Project-Id header names no project of yours');

  const body = problems.filter((p) => p.path === '/body' || p.path.startsWith('/body/'));
  if (body.length > 0) {
    return invalidRequestBody(
      body.map((p) => ({ pointer: p.path.slice('/body'.length), reason: p.message })),
    );
  }
  const query = problems.find((p) => p.path.startsWith('/query/'));
  if (query) {
    const parameter = query.path.slice('/query/'.length);
    return new DomainError(
      'invalid_query_parameter',
      `invalid query parameter ${parameter}: ${query.message}`,
      {
        parameter,
        reason: query.message,
      },
    );
  }
  // A path whose percent-encoding is not UTF-8 cannot be decoded into its variables.
  if (problems.some((p) => p.message.startsWith('malformed uri'))) return undecodablePath();
  const param = problems.find((p) => p.path.startsWith('/params/'));
  if (param) {
    const variable = param.path.slice('/params/'.length);
    const message =
      malformedIdMessage(variable, req) ?? `invalid route variable ${variable}: ${param.message}`;
    return new DomainError('invalid_route_variable', message, { variable, reason: param.message });
  }
  // A missing body where one is required arrives without a located path.
  return invalidRequestBody(problems.map((p) => ({ pointer: '', reason: p.message })));
}

/** Errors of body-parser, which parses the request before the validator sees it. */
function fromBodyParser(error: {
  type?: string;
  message?: string;
  status?: number;
  errors?: unknown;
}): DomainError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new DomainError('invalid_json', `the request body is not valid JSON: ${error.message}`);
    case 'entity.too.large':
      return new DomainError('request_body_too_large', 'the request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new DomainError('unsupported_media_type', error.message ?? 'unsupported encoding');
    default:
      // What it could not read otherwise (a gzip, deflate or br body that does not
      // decompress) comes as a bare 400; the validator's 400s list their problems.
      if (error.status !== 400 || error.errors !== undefined) return undefined;
      return invalidRequestBody([
        { pointer: '', reason: `cannot be read: ${error.message ?? 'unknown error'}` },
      ]);
  }
}

function toDomainError(error: unknown, req: Request): DomainError {
  if (error instanceof DomainError) return error;
  // Express's router decodes the path's variables, and fails on broken percent-encoding.
  if (error instanceof URIError) return undecodablePath();
  const parsed = fromBodyParser(error as { type?: string });
  if (parsed) return parsed;
  if (isValidatorError(error)) return fromValidator(error, req);
  if (isStorageUnavailable(error)) {
    return new DomainError('service_unavailable', 'the server cannot write to its storage now; retry later');
  }
  return new DomainError('internal_error', 'internal error');
}

export function toApiError(error: unknown, req: Request): ApiError {
  const { code, message, data } = toDomainError(error, req);
  const { status } = ERROR_CODES[code];
  const headers: Record<string, string> = {};
  if (status === 401) {
    headers['WWW-Authenticate'] =
      code === 'invalid_api_key'
        ? 'Bearer realm="pipewright", error="invalid_token"'
        : 'Bearer realm="pipewright"';
  }
  if (code === 'method_not_allowed') headers.Allow = String(data?.allow ?? '');
  if (code === 'rate_limited') headers['Retry-After'] = String(data?.retry_after_seconds ?? 1);
  return { status, headers, body: { error: message, code, ...(data ? { data } : {}) } };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    const mapped = toApiError(error, req);
    if (mapped.status >= 500) {
      logger.error('request failed', {
        request_id: res.locals.requestId,
        error: String(error?.stack ?? error),
      });
    }
    res.status(mapped.status).set(mapped.headers).json(mapped.body);
  };
}
