// The live feed socket of herald-client (docs/API.md §12): opens
// /user/v1/feed/live?api_key=<public key>, sends the user's credentials in the
// first frame (never in the URL) with `since_seq` when resuming, and reconnects
// with exponential backoff and jitter. Close codes: 4401 → ask for a new token
// once, else stop (`unauthorized`); 4408 → stop (`evicted`: the user opened too
// many sockets, reconnecting would only evict another); anything else (1001 server
// restart, 1013 too slow, 1006 dropped…) → reconnect and resume. Pings are
// answered by the WebSocket implementation itself (protocol-level pongs).

import { HeraldError } from './errors.js';
import type { Transport } from './http.js';
import type { AuthFrame, ConnectionState, ServerFrame, WebSocketConstructor, WebSocketLike } from './types.js';

export interface LiveHandlers {
  /** The last applied seq, sent as `since_seq` (null: a fresh start). */
  sinceSeq(): number | null;
  frame(f: ServerFrame): void;
  state(s: ConnectionState, info: { code?: number; reason?: string; retryInMs?: number; error?: HeraldError }): void;
}

export const CLOSE_UNAUTHENTICATED = 4401;
export const CLOSE_TOO_MANY = 4408;
const CONNECT_TIMEOUT_MS = 15_000;

export class LiveSocket {
  private ws: WebSocketLike | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private running = false;
  private lastError: HeraldError | null = null;
  private refreshedSinceHello = false;
  private readonly initialDelay: number;
  private readonly maxDelay: number;
  private readonly onOnline = () => {
    if (this.running && !this.ws && this.timer) this.connect();
  };

  constructor(
    private readonly transport: Transport,
    private readonly WS: WebSocketConstructor,
    private readonly h: LiveHandlers,
    backoff: { initialDelayMs?: number; maxDelayMs?: number } = {},
  ) {
    this.initialDelay = backoff.initialDelayMs ?? 500;
    this.maxDelay = backoff.maxDelayMs ?? 30_000;
  }

  get active(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    const g = globalThis as { addEventListener?: (t: string, f: () => void) => void };
    if (typeof g.addEventListener === 'function') g.addEventListener('online', this.onOnline);
    this.connect();
  }

  /** Closes the socket (1000) and cancels any reconnect. */
  stop(state: ConnectionState = 'idle', info: { code?: number; reason?: string; error?: HeraldError } = {}): void {
    const wasRunning = this.running;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const g = globalThis as { removeEventListener?: (t: string, f: () => void) => void };
    if (typeof g.removeEventListener === 'function') g.removeEventListener('online', this.onOnline);
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      try {
        ws.close(1000, 'unsubscribed');
      } catch {
        /* already closed */
      }
    }
    if (wasRunning) this.h.state(state, info);
  }

  /** Drops the current socket and reconnects now (e.g. after a new token). */
  reconnectNow(): void {
    if (!this.running) return;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      try {
        ws.close(1000, 'reconnecting');
      } catch {
        /* already closed */
      }
    }
    this.connect();
  }

  private url(): string {
    const u = new URL(this.transport.baseUrl + '/user/v1/feed/live');
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    // the public key only: the user's credentials go in the first frame
    u.searchParams.set('api_key', this.transport.publicKey);
    return u.toString();
  }

  private connect(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.running) return;
    this.lastError = null;
    this.h.state('connecting', {});
    let ws: WebSocketLike;
    try {
      ws = new this.WS(this.url());
    } catch (e) {
      this.scheduleReconnect(0, e instanceof Error ? e.message : String(e));
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      opened = true;
      clearTimeout(watchdog);
      if (this.ws !== ws) return;
      const auth: AuthFrame = { type: 'auth', ...this.transport.credentials() };
      const since = this.h.sinceSeq();
      if (since !== null) auth.since_seq = since;
      ws.send(JSON.stringify(auth));
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return;
      let f: ServerFrame;
      try {
        f = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      if (!f || typeof f !== 'object' || typeof (f as { type?: unknown }).type !== 'string') return;
      if (f.type === 'error') {
        this.lastError = HeraldError.fromBody(f.error?.status ?? 401, f, f.error?.request_id ?? null);
        return;
      }
      if (f.type === 'hello') {
        this.attempt = 0;
        this.refreshedSinceHello = false;
        this.h.state('live', {});
      }
      this.h.frame(f);
    };
    const gone = (code: number, reason: string) => {
      clearTimeout(watchdog);
      if (this.ws !== ws) return;
      this.ws = null;
      if (!this.running) return;
      void this.closed(code, reason);
    };
    // a socket that neither opens nor fails (a black-holed network) is given up on
    const watchdog = setTimeout(() => {
      if (this.ws === ws && ws.readyState === 0) {
        try {
          ws.close();
        } catch {
          /* not open */
        }
        gone(1006, 'connect timeout');
      }
    }, CONNECT_TIMEOUT_MS);
    let opened = false;
    ws.onerror = () => {
      // browsers follow an error with a close event; some WebSocket implementations
      // (node 20's) do not when the connection itself failed, so a failed connect
      // counts as closed now and an open socket gets a moment for its close event
      if (!opened) return gone(1006, 'connection failed');
      setTimeout(() => gone(1006, 'connection error'), 1000);
    };
    ws.onclose = (ev) => gone(ev.code, ev.reason || '');
  }

  private async closed(code: number, reason: string): Promise<void> {
    if (code === CLOSE_UNAUTHENTICATED) {
      const err =
        this.lastError ??
        new HeraldError({ code: 'unauthenticated', message: reason || 'the live feed closed the socket (4401)', status: 401 });
      if (!this.refreshedSinceHello) {
        this.refreshedSinceHello = true;
        const before = this.transport.tokenVersion;
        const token = await this.transport.refreshToken(err);
        if (!this.running) return;
        if (token || this.transport.tokenVersion !== before) return this.connect();
      }
      return this.stop('unauthorized', { code, reason, error: err });
    }
    if (code === CLOSE_TOO_MANY) {
      return this.stop('evicted', { code, reason });
    }
    this.scheduleReconnect(code, reason);
  }

  private scheduleReconnect(code: number, reason: string): void {
    const d = Math.min(this.maxDelay, this.initialDelay * 2 ** this.attempt);
    const delay = Math.round(d / 2 + (Math.random() * d) / 2);
    this.attempt = Math.min(this.attempt + 1, 16);
    this.h.state('offline', { code, reason, retryInMs: delay });
    this.timer = setTimeout(() => this.connect(), delay);
  }
}
