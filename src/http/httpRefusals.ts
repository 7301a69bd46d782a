import { AppError, classifyError, ERROR_CATALOGUE, type ClassifiedError, type ErrorCode } from '../errors.js';

/** The general code of each HTTP status, for a status that comes without a code of ours. */
const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'VALIDATION_ERROR',
  401: 'AUTHENTICATION_ERROR',
  403: 'AUTHORIZATION_ERROR',
  404: 'NOT_FOUND_ERROR',
  405: 'METHOD_NOT_ALLOWED_ERROR',
  408: 'TIMEOUT',
  409: 'CONFLICT_ERROR',
  413: 'PAYLOAD_TOO_LARGE_ERROR',
  414: 'URI_TOO_LONG_ERROR',
  415: 'UNSUPPORTED_MEDIA_TYPE_ERROR',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMIT_ERROR',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
  507: 'INSUFFICIENT_STORAGE',
};

export const codeForStatus = (status: number): ErrorCode =>
  STATUS_CODES[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');

/** Friendlier details for the framework's own refusals of a body. */
const FRAMEWORK_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty but its content type is JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body exceeds the size limit',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Only application/json bodies are accepted',
};

/** An error the framework (or this surface, before a handler runs) raised with a 4xx status of its own. */
const frameworkRefusal = (error: unknown): { status: number; code?: string; message?: string } | null => {
  const refusal = error as { statusCode?: unknown; code?: string; message?: string } | null;
  const status = refusal?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  return { status, code: refusal?.code, message: refusal?.message };
};

/**
 * Classifies an error met over HTTP: a refusal by the framework keeps its status and is named by
 * it in the catalogue; everything else is classified by the catalogue alone.
 */
export const classifyHttpError = (error: unknown): ClassifiedError => {
  const refusal = error instanceof AppError ? null : frameworkRefusal(error);
  if (!refusal) return classifyError(error);
  const code = codeForStatus(refusal.status);
  const detail = FRAMEWORK_DETAILS[refusal.code ?? ''] ?? refusal.message ?? 'Bad request';
  return { ...ERROR_CATALOGUE[code], code, type: code, status: refusal.status, detail, expected: true };
};

/** A refusal raised before a handler runs (no route, a bad URL), as the framework raises its own. */
export const httpRefusal = (status: number, message: string): Error => Object.assign(new Error(message), { statusCode: status });
