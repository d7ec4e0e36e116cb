// Hand-written types of herald-client: its options, the live feed's frames
// (docs/API.md §12, not described by /openapi.json), the feed store's state and the
// events listeners receive. The REST resources come from api-types.ts (generated).

import type { FeedEntry, FeedMeta, FeedPage } from './api-types.js';
import type { HeraldError } from './errors.js';

/** What `onTokenExpired` may return: a new user token, or nothing to give up. */
export type TokenRefresher = (error: HeraldError) => string | null | undefined | Promise<string | null | undefined>;

export interface HeraldOptions {
  /** The Herald origin, e.g. `https://herald.example.com`. */
  baseUrl: string;
  /** The project's public key (`pk_…`); safe in a browser. */
  publicKey: string;
  /** The user's RS256 JWT (production). */
  userToken?: string;
  /** The user's external_id (development: only while the project's security mode is off). */
  userId?: string;
  /** Called when the server answers `token_expired` (HTTP 401 or the live socket's 4401); may return a new token. */
  onTokenExpired?: TokenRefresher;
  /** A `fetch` implementation (defaults to the global one). */
  fetch?: typeof fetch;
  /** A `WebSocket` constructor (defaults to the global one). */
  WebSocket?: WebSocketConstructor;
  /** Reconnect backoff: first delay and cap, in ms (defaults 500 and 30,000); each delay has full jitter in [d/2, d]. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Times a request answered 429 is retried after its `Retry-After` (default 3). */
  rateLimitRetries?: number;
}

export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export type FeedStatus = 'all' | 'unread' | 'unseen' | 'read' | 'archived';

export interface FetchOptions {
  status?: FeedStatus;
  limit?: number;
  after?: string;
  before?: string;
}

// ---------------------------------------------------------------- live frames

export interface HelloFrame { type: 'hello'; seq: number; meta: FeedMeta }
export interface EntryFrame { type: 'feed_entry.created' | 'feed_entry.updated'; seq: number; entry: FeedEntry; meta: FeedMeta }
export interface ResetFrame { type: 'reset'; seq: number }
export interface ErrorFrame { type: 'error'; error: { code: string; message: string; status: number; details?: Record<string, unknown>; request_id?: string | null; type?: string } }
/** The counts per category, after events, in a project with categories (not an event: no seq of its own). */
export interface CountsFrame { type: 'feed.counts'; seq: number; meta: FeedMeta }
export type ServerFrame = HelloFrame | EntryFrame | ResetFrame | ErrorFrame | CountsFrame;

/** The frame a browser sends first on the live socket (never credentials in the URL). */
export interface AuthFrame { type: 'auth'; user_key?: string; user_id?: string; since_seq?: number }

// ---------------------------------------------------------------- the store

/**
 * The live socket's state: `idle` (not subscribed), `connecting`, `live`,
 * `offline` (dropped; a reconnect is scheduled), `unauthorized` (4401 and no new
 * token: stopped), `evicted` (4408: the user opened too many sockets; stopped).
 */
export type ConnectionState = 'idle' | 'connecting' | 'live' | 'offline' | 'unauthorized' | 'evicted';

export interface FeedState {
  /** The loaded entries that match the feed's status, newest first, with pending optimistic changes applied. */
  items: FeedEntry[];
  /** Counts, with pending optimistic changes applied; null before the first fetch or frame. */
  meta: FeedMeta | null;
  /**
   * Unread and unseen counts per preference category (tabs' badges): the
   * server's latest, a moment after each change; null when the project
   * declares no category (or before the first page or `hello`).
   */
  byCategory: NonNullable<FeedMeta['by_category']> | null;
  /** Whether older entries remain to load (`fetchNextPage`). */
  hasMore: boolean;
  connection: ConnectionState;
  /** The last live event applied (null before the first `hello`). */
  lastSeq: number | null;
  /** The last error of the live socket or of a background refetch. */
  error: HeraldError | null;
}

export type FeedEvent =
  | { type: 'fetched'; page: FeedPage }
  | { type: 'feed_entry.created' | 'feed_entry.updated'; seq: number; entry: FeedEntry; meta: FeedMeta }
  | { type: 'reset'; seq: number }
  | { type: 'connection'; state: ConnectionState; code?: number; reason?: string; retryInMs?: number }
  | { type: 'optimistic'; ids: string[] }
  | { type: 'rollback'; ids: string[]; error: HeraldError }
  | { type: 'meta'; meta: FeedMeta };

export type FeedListener = (state: FeedState, event: FeedEvent) => void;
