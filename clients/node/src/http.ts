// The transport under every resource method: builds an Admin API request
// (public + secret key headers, JSON body, path and query), gives creating
// POSTs an Idempotency-Key, retries what is safe to retry (429, 503, network
// failures) with exponential backoff, full jitter and the server's
// Retry-After, and turns every failure into a typed HeraldError.

import { randomUUID } from 'node:crypto';
import {
  HeraldError,
  HeraldNetworkError,
  HeraldProtocolError,
  HeraldTimeoutError,
  errorFromResponse,
} from './errors.js';
import type { Operation } from './operations.js';

export const SDK_VERSION = '0.1.0';

export interface HeraldOptions {
  /** The project's public key (`pk_…`), sent as `x-service-api-key`. */
  publicKey: string;
  /** The project's secret key (`sk_…`), sent as `x-service-secret-key`. Keep it on your backend. */
  secretKey: string;
  /** Where Herald answers, e.g. `https://herald.example.com` (no `/admin/v1`). */
  baseUrl: string;
  /** Retries after a 429, a 503 or a network failure (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** How long one attempt may take before it is abandoned (default 30 000 ms). */
  timeoutMs?: number;
  /** The first backoff step (default 500 ms); each retry doubles it, with full jitter. */
  retryBaseDelayMs?: number;
  /** The longest wait between attempts (default 30 000 ms); a longer Retry-After is not waited for. */
  retryMaxDelayMs?: number;
  /** A fetch to use instead of the global one (a proxy agent, instrumentation). */
  fetch?: typeof fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Called before each retry: for logs and metrics. */
  onRetry?: (event: RetryEvent) => void;
}

/** What `onRetry` is told. */
export interface RetryEvent {
  method: string;
  path: string;
  /** 1 for the first retry. */
  attempt: number;
  /** How long the SDK waits before it. */
  delayMs: number;
  /** Why: the 429 / 503 answer, or the network failure. */
  error: HeraldError;
}

/** Options every method takes as its last argument. */
export interface CallOptions {
  /**
   * The Idempotency-Key of a creating POST. One is made up for every such call
   * when absent (and kept across its retries); `null` sends none.
   */
  idempotencyKey?: string | null;
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Sent as `x-request-id`, so the server's logs and errors carry it. */
  requestId?: string;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** What the answer to a call looked like: see `responseOf`. */
export interface ResponseInfo {
  status: number;
  headers: Headers;
  /** The `x-request-id` the server answered with. */
  requestId: string | null;
  /** True when the answer is the replay of an earlier one with the same Idempotency-Key. */
  replayed: boolean;
  /** The Idempotency-Key sent, if any. */
  idempotencyKey: string | null;
  /** How many attempts the call took (1 without retries). */
  attempts: number;
}

const responses = new WeakMap<object, ResponseInfo>();

/**
 * The status, headers, request id and replay flag of the answer a method
 * returned `value` from (objects only; undefined for a 204 or anything else).
 */
export function responseOf(value: unknown): ResponseInfo | undefined {
  return value !== null && typeof value === 'object' ? responses.get(value) : undefined;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestParts {
  path?: Record<string, string>;
  query?: Record<string, QueryValue> | object;
  body?: unknown;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), as milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const d = Date.parse(value);
  return Number.isNaN(d) ? undefined : Math.max(0, d - now);
}

export class Transport {
  readonly baseUrl: string;
  private readonly publicKey: string;
  private readonly secretKey: string;
  private readonly fetchImpl: typeof fetch;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  private readonly baseDelay: number;
  private readonly maxDelay: number;
  private readonly extraHeaders: Record<string, string>;
  private readonly onRetry: ((e: RetryEvent) => void) | undefined;

  constructor(o: HeraldOptions) {
    if (!o || typeof o !== 'object') throw new TypeError('herald-node: options are required');
    if (!o.baseUrl) throw new TypeError('herald-node: baseUrl is required');
    if (!o.publicKey) throw new TypeError('herald-node: publicKey is required');
    if (!o.secretKey) throw new TypeError('herald-node: secretKey is required');
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.publicKey = o.publicKey;
    this.secretKey = o.secretKey;
    const f = o.fetch ?? (globalThis.fetch as typeof fetch | undefined);
    if (!f) throw new TypeError('herald-node: no fetch implementation (Node >= 18 has one)');
    this.fetchImpl = o.fetch ? f : f.bind(globalThis);
    this.maxRetries = nonNegative(o.maxRetries, 3, 'maxRetries');
    this.timeoutMs = nonNegative(o.timeoutMs, 30_000, 'timeoutMs');
    this.baseDelay = nonNegative(o.retryBaseDelayMs, 500, 'retryBaseDelayMs');
    this.maxDelay = nonNegative(o.retryMaxDelayMs, 30_000, 'retryMaxDelayMs');
    this.extraHeaders = { ...(o.headers ?? {}) };
    this.onRetry = o.onRetry;
  }

  /** The URL of an operation with its path parameters filled in and its query. */
  url(op: Operation, parts: RequestParts): string {
    const p = op.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      const v = parts.path?.[name];
      if (v === undefined || v === null || v === '') throw new TypeError(`herald-node: ${name} is required`);
      return encodeURIComponent(String(v));
    });
    let u = this.baseUrl + p;
    if (parts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(parts.query as Record<string, QueryValue>)) {
        if (v !== undefined && v !== null) q.set(k, String(v));
      }
      const s = q.toString();
      if (s) u += '?' + s;
    }
    return u;
  }

  /** The wait before retry number `attempt` (1-based): full jitter over an exponential step, at least Retry-After. */
  backoff(attempt: number, retryAfterMs: number | undefined): number {
    const step = Math.min(this.maxDelay, this.baseDelay * 2 ** (attempt - 1));
    const jittered = Math.random() * step;
    return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
  }

  /** Sends one call of `op`, retrying as the rules above say; resolves with the parsed body. */
  async request<T>(op: Operation, parts: RequestParts = {}, opts: CallOptions = {}): Promise<T> {
    const url = this.url(op, parts);
    const path = url.slice(this.baseUrl.length).split('?')[0]!;
    const hasBody = parts.body !== undefined;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': `herald-node/${SDK_VERSION}`,
      ...this.extraHeaders,
      ...(opts.headers ?? {}),
      'x-service-api-key': this.publicKey,
      'x-service-secret-key': this.secretKey,
    };
    if (hasBody) headers['content-type'] = 'application/json';
    if (opts.requestId) headers['x-request-id'] = opts.requestId;
    let idempotencyKey: string | null = null;
    if (op.idempotent) {
      idempotencyKey = opts.idempotencyKey === undefined ? randomUUID() : opts.idempotencyKey;
      if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
    }
    const body = hasBody ? JSON.stringify(parts.body) : undefined;
    const maxRetries = opts.maxRetries ?? this.maxRetries;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    // a call without an answer may have been carried out: repeat it only when
    // a repeat cannot do it twice (the method is idempotent, or a key replays it)
    const repeatable = op.repeatable || idempotencyKey !== null;

    for (let attempt = 1; ; attempt++) {
      let error: HeraldError;
      let retryAfterMs: number | undefined;
      try {
        const { res, text } = await this.attempt(op.method, url, path, headers, body, timeoutMs, opts.signal);
        if (res.status >= 200 && res.status < 300) return this.success<T>(res, text, op.method, path, idempotencyKey, attempt);
        error = errorFromResponse(res.status, parseJson(text), res.headers, op.method, path);
        retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
        if (!(res.status === 429 || res.status === 503)) throw error;
      } catch (e) {
        if (!(e instanceof HeraldNetworkError)) throw e;
        error = e;
        if (!repeatable) throw e;
      }
      if (attempt > maxRetries) throw error;
      // a server asking for a longer pause than we would wait: say so at once
      if (retryAfterMs !== undefined && retryAfterMs > this.maxDelay) throw error;
      const delayMs = this.backoff(attempt, retryAfterMs);
      this.onRetry?.({ method: op.method, path, attempt, delayMs, error });
      await sleep(delayMs, opts.signal);
    }
  }

  private async attempt(
    method: string,
    url: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ res: Response; text: string }> {
    if (signal?.aborted) throw signal.reason;
    const ctl = new AbortController();
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => { timedOut = true; ctl.abort(); }, timeoutMs) : undefined;
    const onAbort = () => ctl.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // the body is read inside the timeout too: an answer cut half-way is a network failure
      const res = await this.fetchImpl(url, { method, headers, body, signal: ctl.signal, redirect: 'manual' });
      const text = await res.text();
      return { res, text };
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const msg = cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message) : String(cause);
      if (timedOut) {
        throw new HeraldTimeoutError({ code: 'timeout', message: `${method} ${path}: no answer within ${timeoutMs} ms`, status: 0, method, path, cause });
      }
      throw new HeraldNetworkError({ code: 'network_error', message: `${method} ${path}: ${msg}`, status: 0, method, path, cause });
    } finally {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private success<T>(res: Response, text: string, method: string, path: string, key: string | null, attempts: number): T {
    const info: ResponseInfo = {
      status: res.status,
      headers: res.headers,
      requestId: res.headers.get('x-request-id'),
      replayed: res.headers.get('idempotent-replayed') === 'true',
      idempotencyKey: key,
      attempts,
    };
    if (res.status === 204 || text === '') return undefined as T;
    const value = parseJson(text);
    if (value === undefined) {
      throw new HeraldProtocolError({
        code: 'protocol_error',
        message: `${method} ${path}: HTTP ${res.status} with a body that is not JSON`,
        status: res.status,
        requestId: info.requestId,
        method,
        path,
        headers: res.headers,
      });
    }
    if (value !== null && typeof value === 'object') responses.set(value, info);
    return value as T;
  }
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function nonNegative(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new TypeError(`herald-node: ${name} must be a number >= 0`);
  return v;
}
