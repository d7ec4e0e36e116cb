// HeraldError: every failure the client reports. The contract's error object
// (docs/API.md §3: code, message, status, details, request_id, type) becomes its
// fields; a failed fetch is `network_error` (status 0) and a response that is
// not the contract's shape is `protocol_error`.

import type { ErrorCode } from './api-types.js';

export type HeraldErrorCode = ErrorCode | 'network_error' | 'protocol_error';

export class HeraldError extends Error {
  override readonly name = 'HeraldError';
  /** The contract's error code (`not_found`, `unauthenticated`…), or `network_error` / `protocol_error`. */
  readonly code: HeraldErrorCode;
  /** The HTTP status (0 when no response arrived). */
  readonly status: number;
  /** Code-specific details: `reason`, `param`, `fields`, `resource`, `retry_after`… */
  readonly details: Record<string, unknown>;
  /** The request's id (`x-request-id`), to quote to whoever runs the server. */
  readonly requestId: string | null;
  /** `https://herald.dev/errors#<code>-<status>`. */
  readonly type: string | null;

  constructor(init: {
    code: HeraldErrorCode;
    message: string;
    status: number;
    details?: Record<string, unknown>;
    requestId?: string | null;
    type?: string | null;
    cause?: unknown;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? {};
    this.requestId = init.requestId ?? null;
    this.type = init.type ?? null;
    if (init.cause !== undefined) (this as { cause?: unknown }).cause = init.cause;
  }

  /** `details.reason` when the server gave one (`token_expired`, `invalid_param`…). */
  get reason(): string | undefined {
    const r = this.details.reason;
    return typeof r === 'string' ? r : undefined;
  }

  /** Builds the error from a response body, whatever it holds. */
  static fromBody(status: number, body: unknown, requestId: string | null): HeraldError {
    const e = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
    if (e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string') {
      const o = e as Record<string, unknown>;
      return new HeraldError({
        code: o.code as ErrorCode,
        message: typeof o.message === 'string' ? o.message : `HTTP ${status}`,
        status: typeof o.status === 'number' ? o.status : status,
        details: o.details && typeof o.details === 'object' ? (o.details as Record<string, unknown>) : {},
        requestId: typeof o.request_id === 'string' ? o.request_id : requestId,
        type: typeof o.type === 'string' ? o.type : null,
      });
    }
    return new HeraldError({
      code: 'protocol_error',
      message: `HTTP ${status} without the error object`,
      status,
      requestId,
    });
  }
}
