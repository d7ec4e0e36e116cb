// The REST transport of herald-client: builds User API requests with the
// project's public key and the user's token (or id), turns error bodies into
// HeraldErrors, retries a 429 after its Retry-After, and on `token_expired`
// asks `onTokenExpired` for a new token once and repeats the request.

import { HeraldError } from './errors.js';
import type { HeraldOptions, TokenRefresher } from './types.js';

export interface RequestOptions {
  query?: Record<string, string | number | undefined | null>;
  body?: unknown;
}

export class Transport {
  readonly baseUrl: string;
  readonly publicKey: string;
  private token: string | undefined;
  private readonly userId: string | undefined;
  private readonly refresher: TokenRefresher | undefined;
  private refreshing: Promise<string | null> | null = null;
  private readonly fetchImpl: typeof fetch;
  private readonly rateLimitRetries: number;
  /** Bumped by every new token, so the live socket can tell it has a fresh one. */
  tokenVersion = 0;

  constructor(o: HeraldOptions) {
    if (!o.baseUrl) throw new TypeError('herald-client: baseUrl is required');
    if (!o.publicKey) throw new TypeError('herald-client: publicKey is required');
    if (!o.userToken && !o.userId) throw new TypeError('herald-client: userToken or userId is required');
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.publicKey = o.publicKey;
    this.token = o.userToken;
    this.userId = o.userId;
    this.refresher = o.onTokenExpired;
    const f = o.fetch ?? (globalThis.fetch as typeof fetch | undefined);
    if (!f) throw new TypeError('herald-client: no fetch implementation');
    this.fetchImpl = f.bind(globalThis);
    this.rateLimitRetries = o.rateLimitRetries ?? 3;
  }

  get userToken(): string | undefined {
    return this.token;
  }

  setUserToken(token: string): void {
    if (!token) throw new TypeError('herald-client: empty user token');
    this.token = token;
    this.tokenVersion += 1;
  }

  /** The auth frame's credentials: the token when there is one, else the user id. */
  credentials(): { user_key: string } | { user_id: string } {
    return this.token ? { user_key: this.token } : { user_id: this.userId as string };
  }

  /** Asks `onTokenExpired` for a new token (one call at a time); null when there is none. */
  async refreshToken(error: HeraldError): Promise<string | null> {
    if (!this.refresher || !this.token) return null;
    if (!this.refreshing) {
      const before = this.tokenVersion;
      this.refreshing = (async () => {
        try {
          const t = await this.refresher!(error);
          if (t && typeof t === 'string') {
            this.setUserToken(t);
            return t;
          }
          // setUserToken may have been called from elsewhere meanwhile
          return this.tokenVersion !== before ? (this.token as string) : null;
        } finally {
          this.refreshing = null;
        }
      })();
    }
    return this.refreshing;
  }

  private headers(hasBody: boolean): Record<string, string> {
    const h: Record<string, string> = { 'x-service-api-key': this.publicKey, accept: 'application/json' };
    if (this.token) h['x-service-user-key'] = this.token;
    else if (this.userId) h['x-service-user-id'] = this.userId;
    if (hasBody) h['content-type'] = 'application/json';
    return h;
  }

  url(path: string, query?: RequestOptions['query']): string {
    let u = this.baseUrl + '/user/v1' + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v));
      const s = q.toString();
      if (s) u += '?' + s;
    }
    return u;
  }

  async request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    let refreshed = false;
    let limited = 0;
    for (;;) {
      const hasBody = o.body !== undefined;
      const sentWith = this.tokenVersion;
      let res: Response;
      try {
        res = await this.fetchImpl(this.url(path, o.query), {
          method,
          headers: this.headers(hasBody),
          body: hasBody ? JSON.stringify(o.body) : undefined,
          cache: 'no-store',
        });
      } catch (cause) {
        throw new HeraldError({
          code: 'network_error',
          message: `${method} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
          status: 0,
          cause,
        });
      }
      const requestId = res.headers.get('x-request-id');
      if (res.status === 204) return undefined as T;
      const text = await res.text();
      let body: unknown = null;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = null;
        }
      }
      if (res.ok) {
        if (body === null) {
          throw new HeraldError({ code: 'protocol_error', message: `${method} ${path}: no JSON body`, status: res.status, requestId });
        }
        return body as T;
      }
      const err = HeraldError.fromBody(res.status, body, requestId);
      if (err.status === 401 && err.reason === 'token_expired' && !refreshed) {
        refreshed = true;
        // another request may have replaced the token meanwhile: then just retry
        if (this.tokenVersion !== sentWith || (await this.refreshToken(err))) continue;
      }
      if (err.status === 429 && limited < this.rateLimitRetries) {
        limited += 1;
        const after = Number(res.headers.get('retry-after')) || Number(err.details.retry_after) || 1;
        await new Promise((r) => setTimeout(r, Math.min(after, 30) * 1000));
        continue;
      }
      throw err;
    }
  }
}
