// The errors herald-node throws. Every failure is a HeraldError; `kind` (and
// the subclass) says whether the server answered with its error object
// (docs/API.md §3: code, message, status, details, request_id, type), no
// answer arrived (a network failure or a timeout), or the answer was not the
// contract's shape. Callers match on `code`, as the API's docs ask.

import type { components } from './schema.js';

/** The API's error codes, as /openapi.json lists them. */
export type ApiErrorCode = components['schemas']['ErrorCode'];

/** An API error code, or one of the SDK's own for failures without an error object. */
export type HeraldErrorCode = ApiErrorCode | 'network_error' | 'timeout' | 'protocol_error';

/** One problem of a 422 `validation_failed` (`details.fields`). */
export interface FieldError {
  field: string;
  reason: string;
  message: string;
}

export type HeraldErrorKind = 'api' | 'network' | 'timeout' | 'protocol';

export interface HeraldErrorInit {
  code: HeraldErrorCode;
  message: string;
  status: number;
  details?: Record<string, unknown>;
  requestId?: string | null;
  type?: string | null;
  method?: string;
  path?: string;
  headers?: Headers;
  cause?: unknown;
}

export class HeraldError extends Error {
  override name = 'HeraldError';
  /** Which kind of failure: `api` (an answer with the error object), `network`, `timeout`, `protocol`. */
  readonly kind: HeraldErrorKind = 'api';
  /** The API's error code (`not_found`, `validation_failed`…) or `network_error` / `timeout` / `protocol_error`. */
  readonly code: HeraldErrorCode;
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** Code-specific details: `reason`, `param`, `fields`, `resource`, `id`, `retry_after`… */
  readonly details: Record<string, unknown>;
  /** The request's id (`x-request-id`): quote it to whoever runs the server. */
  readonly requestId: string | null;
  /** `https://herald.dev/errors#<code>-<status>`, when the server sent one. */
  readonly type: string | null;
  /** The request that failed, e.g. `POST` and `/admin/v1/flows/welcome/run`. */
  readonly method: string | undefined;
  readonly path: string | undefined;
  /** The answer's headers, when there was an answer. */
  readonly headers: Headers | undefined;

  constructor(init: HeraldErrorInit) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? {};
    this.requestId = init.requestId ?? null;
    this.type = init.type ?? null;
    this.method = init.method;
    this.path = init.path;
    this.headers = init.headers;
    if (init.cause !== undefined) (this as { cause?: unknown }).cause = init.cause;
  }

  /** `details.reason` when the server gave one (`invalid_param`, `invalid_transition`…). */
  get reason(): string | undefined {
    const r = this.details.reason;
    return typeof r === 'string' ? r : undefined;
  }

  /** The problems of a 422 `validation_failed`; empty otherwise. */
  get fields(): FieldError[] {
    const f = this.details.fields;
    return Array.isArray(f) ? (f as FieldError[]) : [];
  }

  /** Seconds to wait before trying again (429 `details.retry_after`, or a `Retry-After` header). */
  get retryAfter(): number | undefined {
    const d = this.details.retry_after;
    if (typeof d === 'number') return d;
    const h = this.headers?.get('retry-after');
    const n = h == null ? NaN : Number(h);
    return Number.isFinite(n) ? n : undefined;
  }
}

/** The server answered with its error object (any non-2xx). */
export class HeraldApiError extends HeraldError {
  override name = 'HeraldApiError';
  override readonly kind: HeraldErrorKind = 'api';
}

/** No answer arrived: the connection failed or was cut. `status` is 0. */
export class HeraldNetworkError extends HeraldError {
  override name = 'HeraldNetworkError';
  override readonly kind: HeraldErrorKind = 'network';
}

/** No answer within `timeoutMs`. A HeraldNetworkError too, since the outcome is just as unknown. */
export class HeraldTimeoutError extends HeraldNetworkError {
  override name = 'HeraldTimeoutError';
  override readonly kind: HeraldErrorKind = 'timeout';
}

/** An answer that is not the contract's shape (a 2xx without JSON, an error without the error object). */
export class HeraldProtocolError extends HeraldError {
  override name = 'HeraldProtocolError';
  override readonly kind: HeraldErrorKind = 'protocol';
}

/** Builds the error of a non-2xx answer from its body, whatever the body holds. */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Headers,
  method: string,
  path: string,
): HeraldError {
  const requestId = headers.get('x-request-id');
  const e = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  if (e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string') {
    const o = e as Record<string, unknown>;
    return new HeraldApiError({
      code: o.code as ApiErrorCode,
      message: typeof o.message === 'string' ? o.message : `HTTP ${status}`,
      status,
      details: o.details && typeof o.details === 'object' ? (o.details as Record<string, unknown>) : {},
      requestId: typeof o.request_id === 'string' ? o.request_id : requestId,
      type: typeof o.type === 'string' ? o.type : null,
      method,
      path,
      headers,
    });
  }
  return new HeraldProtocolError({
    code: 'protocol_error',
    message: `${method} ${path}: HTTP ${status} without the error object`,
    status,
    requestId,
    method,
    path,
    headers,
  });
}
