// The feed store of herald-client: pages of GET /user/v1/feed, the entry
// actions (single, many, all) with optimistic updates, and the live
// subscription that keeps entries and counts in step with every frame —
// resume with since_seq (duplicates dropped by seq), refetch on `reset` or a
// gap, optimistic changes reconciled with the server's frames.

import type { FeedEntry, FeedMeta, FeedPage, MarkAllResult } from './api-types.js';
import { HeraldError } from './errors.js';
import type { Transport } from './http.js';
import { LiveSocket } from './live.js';
import type {
  ConnectionState,
  EntryFrame,
  FeedEvent,
  FeedListener,
  FeedState,
  FeedStatus,
  FetchOptions,
  ServerFrame,
  WebSocketConstructor,
} from './types.js';

type Patch = { seen?: true; read?: boolean; clicked?: true; archived?: boolean };
type Action = 'seen' | 'read' | 'clicked' | 'archive' | 'unarchive' | 'unread';

/**
 * A pending optimistic change. Its effect is re-applied on top of the server's
 * version of its entry (and the counts) until the server's counts are known to
 * include it: its own frame (an entry frame that satisfies the patch), a page
 * that shows the entry satisfying it, or — with no live socket — a counts
 * request made after the HTTP answer. The HTTP answer alone does not settle
 * it: it carries the entry but no counts, so writing it into the store while
 * the counts are older would take the change out of the counts twice over
 * (unread 1, then back to 2 until the frame came).
 */
interface Op {
  id: string;
  patch: Patch;
  /** when the change was made (the optimistic timestamps) */
  at: string;
  /** the HTTP call has answered (the op then waits for its frame, or times out) */
  answered: boolean;
  /** the server's answer: the entry with the change applied (its timestamps are shown) */
  answer?: FeedEntry;
  timer?: ReturnType<typeof setTimeout>;
}

interface BulkOp {
  kind: 'seen_all' | 'read_all';
  /** frames still expected (known once the response says how many were updated) */
  expect: number | null;
  counted: number;
  meta: FeedMeta;
}

const PATCHES: Record<Action, Patch> = {
  seen: { seen: true },
  read: { read: true },
  clicked: { clicked: true },
  archive: { archived: true },
  unarchive: { archived: false },
  unread: { read: false },
};

/** How long an answered optimistic op waits for its frame before the server's counts win. */
const CONFIRM_TIMEOUT_MS = 10_000;

function applyPatch(e: FeedEntry, p: Patch, now: string): FeedEntry {
  const x = { ...e };
  if (p.seen) {
    x.seen = true;
    x.seen_at = x.seen_at ?? now;
  }
  if (p.read === true) {
    x.read = true;
    x.read_at = x.read_at ?? now;
    x.seen = true;
    x.seen_at = x.seen_at ?? now;
  } else if (p.read === false) {
    x.read = false;
    x.read_at = null;
  }
  if (p.clicked) {
    x.clicked = true;
    x.clicked_at = x.clicked_at ?? now;
  }
  if (p.archived !== undefined) {
    x.archived = p.archived;
    x.archived_at = p.archived ? x.archived_at ?? now : null;
  }
  return x;
}

/** `applyPatch` with the server's timestamps when it has answered. */
function applyOp(e: FeedEntry, op: Op): FeedEntry {
  const x = applyPatch(e, op.patch, op.at);
  const a = op.answer;
  if (a) {
    if (x.seen && a.seen && a.seen_at) x.seen_at = a.seen_at;
    if (x.read && a.read && a.read_at) x.read_at = a.read_at;
    if (x.clicked && a.clicked && a.clicked_at) x.clicked_at = a.clicked_at;
    if (x.archived && a.archived && a.archived_at) x.archived_at = a.archived_at;
  }
  return x;
}

function satisfies(e: FeedEntry, p: Patch): boolean {
  return (Object.keys(p) as (keyof Patch)[]).every((k) => e[k] === p[k]);
}

function counts(e: FeedEntry): { unread: number; unseen: number } {
  return { unread: !e.archived && !e.read ? 1 : 0, unseen: !e.archived && !e.seen ? 1 : 0 };
}

/** Whether an entry belongs in a list fetched with `status`. */
export function matchesStatus(e: FeedEntry, status: FeedStatus): boolean {
  switch (status) {
    case 'all': return !e.archived;
    case 'unread': return !e.archived && !e.read;
    case 'unseen': return !e.archived && !e.seen;
    case 'read': return !e.archived && e.read;
    case 'archived': return e.archived;
  }
}

export class Feed {
  /** The status this feed's store holds (default `all`: every entry not archived). */
  readonly status: FeedStatus;
  /**
   * The preference category this feed's store holds (a tab), or undefined for
   * every entry. Entries do not name their categories, so the store learns
   * which flows are in it from its pages; a live entry of a flow it has not
   * seen yet makes it reload its first page rather than guess.
   */
  readonly category: string | undefined;
  private readonly categoryFlows = new Set<string>();
  readonly pageSize: number;
  private readonly server = new Map<string, FeedEntry>(); // last known server version of each loaded entry
  private order: string[] = []; // loaded ids, newest (largest UUID v7) first
  private serverMeta: FeedMeta | null = null;
  private after: string | null = null; // cursor of the next older page
  private hasMore = false;
  private ops: Op[] = [];
  private bulk: BulkOp | null = null;
  private lastSeq: number | null = null;
  private syncing = 0;
  private queued: ServerFrame[] = [];
  /** The server's latest counts per category (`meta.by_category`), when the project has categories. */
  private byCategory: FeedMeta['by_category'] = undefined;
  private connection: ConnectionState = 'idle';
  /** the socket is authenticated (frames will come), whatever `connection` shows */
  private socketLive = false;
  /** `live` is shown once the first sync after a fresh hello is done */
  private liveAfterSync = false;
  private error: HeraldError | null = null;
  private readonly listeners = new Set<FeedListener>();
  private live: LiveSocket | null = null;
  /** Frames dropped because their seq was already applied (a resume that overlapped). */
  duplicatesDropped = 0;

  constructor(
    private readonly t: Transport,
    private readonly WS: WebSocketConstructor | undefined,
    private readonly backoff: { initialDelayMs?: number; maxDelayMs?: number } | undefined,
    opts: { status?: FeedStatus; pageSize?: number; category?: string } = {},
  ) {
    this.status = opts.status ?? 'all';
    this.category = opts.category;
    this.pageSize = opts.pageSize ?? 25;
  }

  // ------------------------------------------------------------ state

  get state(): FeedState {
    const items: FeedEntry[] = [];
    for (const id of this.order) {
      const e = this.displayed(id);
      if (e && matchesStatus(e, this.status)) items.push(e);
    }
    return {
      items,
      meta: this.displayedMeta(),
      byCategory: this.countsByCategory(),
      hasMore: this.hasMore,
      connection: this.connection,
      lastSeq: this.lastSeq,
      error: this.error,
    };
  }

  private displayed(id: string): FeedEntry | undefined {
    let e = this.server.get(id);
    if (!e) return undefined;
    for (const op of this.ops) if (op.id === id) e = applyOp(e, op);
    if (this.bulk) e = applyPatch(e, this.bulk.kind === 'read_all' ? { read: true } : { seen: true }, new Date().toISOString());
    return e;
  }

  /** Keeps the counts per category a page, a frame or an answer brings. */
  private noteCategories(meta: FeedMeta | undefined): void {
    if (meta && meta.by_category) this.byCategory = meta.by_category;
  }

  /**
   * The unread and unseen counts per preference category, for tabs with
   * badges (`meta.by_category`: null when the project declares none). They
   * are the server's, a moment after each change (they follow events in a
   * `feed.counts` frame), without optimistic changes.
   */
  countsByCategory(): NonNullable<FeedMeta['by_category']> | null {
    return this.byCategory ?? null;
  }

  private displayedMeta(): FeedMeta | null {
    if (this.bulk) return { unread_count: this.bulk.meta.unread_count, unseen_count: this.bulk.meta.unseen_count };
    if (!this.serverMeta) return null;
    let unread = this.serverMeta.unread_count;
    let unseen = this.serverMeta.unseen_count;
    // each pending op's effect on the counts, against the server's version of its
    // entry: that version and serverMeta come from the same snapshot (a page, a
    // frame), so whatever frame comes, the op's effect is counted exactly once
    const seen = new Map<string, FeedEntry>();
    for (const op of this.ops) {
      const before = seen.get(op.id) ?? this.server.get(op.id);
      if (!before) continue;
      const after = applyPatch(before, op.patch, op.at);
      seen.set(op.id, after);
      const a = counts(before);
      const b = counts(after);
      unread += b.unread - a.unread;
      unseen += b.unseen - a.unseen;
    }
    return { unread_count: Math.max(0, unread), unseen_count: Math.max(0, unseen) };
  }

  private emit(event: FeedEvent): void {
    if (!this.listeners.size) return;
    const s = this.state;
    for (const l of [...this.listeners]) {
      try {
        l(s, event);
      } catch (e) {
        setTimeout(() => {
          throw e;
        });
      }
    }
  }

  /** Adds or refreshes an entry in the store; `force` inserts it even past the loaded window. */
  private put(e: FeedEntry, force: boolean): void {
    if (this.server.has(e.id)) {
      this.server.set(e.id, e);
      return;
    }
    const oldest = this.order[this.order.length - 1];
    if (!force && this.hasMore && oldest !== undefined && e.id < oldest) return; // beyond what is loaded: paging brings it
    this.server.set(e.id, e);
    // binary search for the descending position
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.order[mid] > e.id) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, e.id);
  }

  private clearStore(): void {
    this.server.clear();
    this.order = [];
  }

  // ------------------------------------------------------------ REST: pages

  /**
   * One page of the feed. Pages of this feed's status also fill the store: no
   * cursor replaces it, `after` appends older entries, `before` merges newer ones.
   */
  async fetch(o: FetchOptions = {}): Promise<FeedPage> {
    const status = o.status ?? this.status;
    const answered = this.ops.filter((op) => op.answered);
    const page = await this.t.request<FeedPage>('GET', '/feed', {
      query: { status, limit: o.limit ?? this.pageSize, after: o.after, before: o.before, category: this.category },
    });
    if (this.category !== undefined) for (const e of page.items) this.categoryFlows.add(e.flow_id);
    if (status === this.status) {
      if (!o.after && !o.before) {
        this.clearStore();
        this.hasMore = page.page.has_more_after;
        this.after = page.page.after;
      } else if (o.after) {
        this.hasMore = page.page.has_more_after;
        this.after = page.page.after;
      }
      for (const e of page.items) this.put(e, true);
      this.noteCategories(page.meta);
      this.dropSatisfiedOps();
      if (!this.bulk) {
        this.absorb(answered);
        this.serverMeta = page.meta;
      }
      this.emit({ type: 'fetched', page });
    }
    return page;
  }

  /** The next older page of the store (infinite scroll); null when everything is loaded. */
  async fetchNextPage(): Promise<FeedPage | null> {
    if (!this.order.length && !this.hasMore) return this.fetch();
    if (!this.hasMore || !this.after) return null;
    return this.fetch({ after: this.after });
  }

  /** The current counts (one small request). */
  async counts(): Promise<FeedMeta> {
    const answered = this.ops.filter((op) => op.answered);
    const page = await this.t.request<FeedPage>('GET', '/feed', { query: { limit: 1 } });
    this.noteCategories(page.meta);
    if (!this.bulk) {
      this.absorb(answered);
      this.serverMeta = page.meta;
      this.emit({ type: 'meta', meta: page.meta });
    }
    return page.meta;
  }

  /** One entry, fresh from the server. */
  async get(id: string): Promise<FeedEntry> {
    return this.t.request<FeedEntry>('GET', `/feed/${encodeURIComponent(id)}`);
  }

  // ------------------------------------------------------------ actions

  markSeen(ids: string): Promise<FeedEntry>;
  markSeen(ids: string[]): Promise<FeedEntry[]>;
  markSeen(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('seen', ids);
  }
  markRead(ids: string): Promise<FeedEntry>;
  markRead(ids: string[]): Promise<FeedEntry[]>;
  markRead(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('read', ids);
  }
  /** `PATCH {read: false}`: the contract refuses to un-read a read entry (409 `conflict`, reason `invalid_transition`). */
  markUnread(ids: string): Promise<FeedEntry>;
  markUnread(ids: string[]): Promise<FeedEntry[]>;
  markUnread(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('unread', ids);
  }
  markClicked(ids: string): Promise<FeedEntry>;
  markClicked(ids: string[]): Promise<FeedEntry[]>;
  markClicked(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('clicked', ids);
  }
  archive(ids: string): Promise<FeedEntry>;
  archive(ids: string[]): Promise<FeedEntry[]>;
  archive(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('archive', ids);
  }
  unarchive(ids: string): Promise<FeedEntry>;
  unarchive(ids: string[]): Promise<FeedEntry[]>;
  unarchive(ids: string | string[]): Promise<FeedEntry | FeedEntry[]> {
    return this.act('unarchive', ids);
  }

  /** `POST /feed/seen_all`: every entry seen. */
  markAllSeen(): Promise<MarkAllResult> {
    return this.actAll('seen_all');
  }
  /** `POST /feed/read_all`: every entry read. */
  markAllRead(): Promise<MarkAllResult> {
    return this.actAll('read_all');
  }
  /**
   * `POST /feed/archive_all`: archives, in one change, every entry the feed
   * list with these filters shows (by default this store's category, every
   * status not archived). Returns how many changed; the live socket brings
   * each entry's frame, and without one the first page is reloaded.
   */
  async archiveAll(filters: { status?: FeedStatus; flow?: string; category?: string } = {}): Promise<number> {
    const r = await this.t.request<MarkAllResult>('POST', '/feed/archive_all', {
      query: { status: filters.status, flow: filters.flow, category: filters.category ?? this.category },
    });
    this.noteCategories(r.meta);
    if (!this.socketLive) await this.fetch();
    return r.updated;
  }

  /**
   * `POST /feed/{id}/interact`: presses the entry's action button `action`
   * (its index in `data.actions`), which also reads it. Shown at once, like
   * the other actions, and rolled back if the server refuses.
   */
  async interact(id: string, action: number): Promise<FeedEntry> {
    const r = await this.act('read', id, (path) =>
      this.t.request<FeedEntry>('POST', `${path}/interact`, { body: { action } }),
    );
    return r as FeedEntry;
  }

  private async act(
    action: Action,
    ids: string | string[],
    send?: (path: string) => Promise<FeedEntry>,
  ): Promise<FeedEntry | FeedEntry[]> {
    const list = Array.isArray(ids) ? ids : [ids];
    const patch = PATCHES[action];
    const at = new Date().toISOString();
    const mine: Op[] = list.map((id) => ({ id, patch, at, answered: false }));
    this.ops.push(...mine);
    this.emit({ type: 'optimistic', ids: list });
    const results = await Promise.allSettled(
      mine.map((op) => {
        const path = `/feed/${encodeURIComponent(op.id)}`;
        if (send) return send(path);
        return action === 'unread'
          ? this.t.request<FeedEntry>('PATCH', path, { body: { read: false } })
          : this.t.request<FeedEntry>('POST', `${path}/${action}`);
      }),
    );
    const failed: string[] = [];
    let firstError: HeraldError | null = null;
    results.forEach((r, i) => {
      const op = mine[i];
      if (r.status === 'fulfilled') {
        this.answered(op, r.value);
      } else {
        this.removeOp(op);
        failed.push(op.id);
        firstError ??= r.reason instanceof HeraldError ? r.reason : new HeraldError({ code: 'network_error', message: String(r.reason), status: 0 });
      }
    });
    if (firstError) {
      this.emit({ type: 'rollback', ids: failed, error: firstError });
      throw firstError;
    }
    // no socket: no frame will confirm them; the counts come from a fresh GET
    if (!this.socketLive) void this.settle(mine.filter((op) => this.ops.includes(op)));
    this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
    const entries = results.map((r) => (r as PromiseFulfilledResult<FeedEntry>).value);
    return Array.isArray(ids) ? entries : entries[0];
  }

  /**
   * The server answered an op. Its entry is kept on the op, not written into the
   * store: the store's version of the entry must stay that of `serverMeta`'s
   * snapshot until a frame (or page) brings both, else the op's effect would be
   * counted in neither (or both).
   */
  private answered(op: Op, entry: FeedEntry): void {
    op.answered = true;
    op.answer = entry;
    if (!this.ops.includes(op)) return; // its frame came first: the store has that (newer) version
    const e = this.server.get(op.id);
    if (e && satisfies(e, op.patch)) {
      // the store already shows it (another device, an earlier frame): nothing left to count
      this.removeOp(op);
      return;
    }
    if (!this.socketLive) return; // act() settles it with a counts request
    op.timer = setTimeout(() => void this.settle([op]), CONFIRM_TIMEOUT_MS);
  }

  /**
   * Ops answered before a request for counts was sent are in those counts: in the
   * same step as the counts are taken, their change is written into the store's
   * entries and they are dropped.
   */
  private absorb(ops: Op[]): void {
    for (const op of ops) {
      if (!this.ops.includes(op)) continue; // confirmed meanwhile
      const e = this.server.get(op.id);
      if (e) this.server.set(op.id, applyOp(e, op));
      this.removeOp(op);
    }
  }

  /**
   * Settles answered ops without a frame (no live socket, or the frame never
   * came) with a counts request made after their answers (which absorbs them).
   */
  private async settle(ops: Op[]): Promise<void> {
    if (!ops.length) return;
    if (this.serverMeta) {
      try {
        await this.counts();
      } catch {
        // the counts stay as they were; the next page or frame corrects them
      }
    }
    if (!ops.some((op) => this.ops.includes(op))) return;
    this.absorb(ops);
    if (this.serverMeta) this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
  }

  private removeOp(op: Op): void {
    if (op.timer) clearTimeout(op.timer);
    const i = this.ops.indexOf(op);
    if (i >= 0) this.ops.splice(i, 1);
  }

  private dropSatisfiedOps(): void {
    for (const op of [...this.ops]) {
      const e = this.server.get(op.id);
      if (op.answered && e && satisfies(e, op.patch)) this.removeOp(op);
    }
  }

  private async actAll(kind: 'seen_all' | 'read_all'): Promise<MarkAllResult> {
    const base = this.displayedMeta() ?? { unread_count: 0, unseen_count: 0 };
    const bulk: BulkOp = {
      kind,
      expect: null,
      counted: 0,
      meta: kind === 'read_all' ? { unread_count: 0, unseen_count: 0 } : { unread_count: base.unread_count, unseen_count: 0 },
    };
    this.bulk = bulk;
    this.emit({ type: 'optimistic', ids: [...this.order] });
    let r: MarkAllResult;
    try {
      r = await this.t.request<MarkAllResult>('POST', `/feed/${kind}`);
    } catch (e) {
      if (this.bulk === bulk) this.bulk = null;
      const err = e instanceof HeraldError ? e : new HeraldError({ code: 'network_error', message: String(e), status: 0 });
      this.emit({ type: 'rollback', ids: [...this.order], error: err });
      throw err;
    }
    this.noteCategories(r.meta);
    if (this.bulk === bulk) {
      bulk.expect = r.updated;
      bulk.meta = r.meta;
      if (!this.socketLive || bulk.counted >= r.updated) this.endBulk(r.meta);
      else {
        // frames carry the per-entry counts; keep showing the final ones until they are all in
        setTimeout(() => {
          if (this.bulk === bulk) this.endBulk(null);
        }, CONFIRM_TIMEOUT_MS);
      }
    }
    // entries the response does not list: mark them locally as the server did
    const now = new Date().toISOString();
    for (const [id, e] of this.server) {
      if (!e.archived) this.server.set(id, applyPatch(e, kind === 'read_all' ? { read: true } : { seen: true }, now));
    }
    this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
    return r;
  }

  private endBulk(meta: FeedMeta | null): void {
    const b = this.bulk;
    this.bulk = null;
    if (meta) this.serverMeta = meta;
    else if (b && !this.serverMeta) this.serverMeta = b.meta;
  }

  // ------------------------------------------------------------ live

  /**
   * Opens the live socket (on the first listener) and calls `listener(state,
   * event)` on every change. Returns the unsubscribe function; the socket closes
   * when the last listener leaves.
   */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (!this.live) {
      const WS = this.WS ?? ((globalThis as { WebSocket?: WebSocketConstructor }).WebSocket);
      if (!WS) throw new TypeError('herald-client: no WebSocket implementation (pass options.WebSocket)');
      this.live = new LiveSocket(
        this.t,
        WS,
        {
          sinceSeq: () => this.lastSeq,
          frame: (f) => this.onFrame(f),
          state: (s, info) => {
            this.socketLive = s === 'live';
            if (info.error) this.error = info.error;
            else if (s === 'live') this.error = null;
            if (s === 'live' && this.lastSeq === null) {
              // a fresh start: the hello that follows refetches the store (resync);
              // `live` is shown once that is done, so `live` means in step with the
              // server (lastSeq set, the store and counts of that moment)
              this.liveAfterSync = true;
              return;
            }
            this.liveAfterSync = false;
            this.connection = s;
            this.emit({ type: 'connection', state: s, code: info.code, reason: info.reason, retryInMs: info.retryInMs });
          },
        },
        this.backoff,
      );
    }
    if (!this.live.active) this.live.start();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.listeners.delete(listener);
      if (!this.listeners.size) this.unsubscribeAll();
    };
  }

  /** Closes the live socket and forgets every listener. */
  unsubscribeAll(): void {
    this.listeners.clear();
    this.live?.stop('idle');
    this.connection = 'idle';
    this.socketLive = false;
    this.liveAfterSync = false;
  }

  /** Reconnects the live socket now (after `setUserToken`, or from an `unauthorized`/`evicted` stop). */
  reconnect(): void {
    if (!this.live) return;
    if (this.live.active) this.live.reconnectNow();
    else if (this.listeners.size) this.live.start();
  }

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'hello':
        this.noteCategories(f.meta);
        if (this.lastSeq === null) {
          void this.resync(f.seq);
        } else if (f.seq === this.lastSeq && !this.syncing && !this.bulk) {
          // nothing missed: the hello's counts are current. (With a replay to come,
          // each replayed frame brings its own counts along with its entry; the
          // hello's already include entries the store has not seen yet.)
          this.serverMeta = f.meta;
          this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
        }
        return;
      case 'reset':
        this.emit({ type: 'reset', seq: f.seq });
        void this.resync(f.seq);
        return;
      case 'feed_entry.created':
      case 'feed_entry.updated':
        return this.applyEvent(f);
      case 'feed.counts':
        this.noteCategories(f.meta);
        if (this.serverMeta) this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
        return;
      default:
        return; // unknown frames are ignored
    }
  }

  private applyEvent(f: EntryFrame): void {
    if (this.syncing) {
      this.queued.push(f);
      return;
    }
    if (this.lastSeq !== null && f.seq <= this.lastSeq) {
      this.duplicatesDropped += 1;
      return;
    }
    if (this.lastSeq !== null && f.seq !== this.lastSeq + 1) {
      // a gap: something was missed, so start over from the server's state
      void this.resync(f.seq);
      return;
    }
    this.lastSeq = f.seq;
    if (this.category !== undefined && !this.server.has(f.entry.id)) {
      // not in this tab's store: in it only if its flow is in the category
      if (!this.categoryFlows.has(f.entry.flow_id)) {
        if (f.type === 'feed_entry.created') {
          // reloaded as a resync is: frames that come meanwhile wait and are
          // applied on top, so the reload cannot drop an entry they bring
          void this.resync(f.seq);
          return;
        }
        if (!this.bulk) this.serverMeta = f.meta;
        this.emit({ type: 'meta', meta: this.displayedMeta() as FeedMeta });
        return;
      }
    }
    this.put(f.entry, f.type === 'feed_entry.created');
    // the frame confirms our own pending changes to this entry
    for (const op of [...this.ops]) if (op.id === f.entry.id && satisfies(f.entry, op.patch)) this.removeOp(op);
    const b = this.bulk;
    if (b && f.type === 'feed_entry.updated' && (b.kind === 'read_all' ? f.entry.read : f.entry.seen)) {
      b.counted += 1;
      if (b.expect !== null && b.counted >= b.expect) this.endBulk(f.meta);
    } else if (!b) {
      this.serverMeta = f.meta;
    }
    this.emit({ type: f.type, seq: f.seq, entry: this.displayed(f.entry.id) ?? f.entry, meta: this.displayedMeta() as FeedMeta });
  }

  /** Reloads the first pages (as many entries as are loaded) and continues from `seq`. */
  private async resync(seq: number): Promise<void> {
    this.syncing += 1;
    try {
      const limit = Math.min(1000, Math.max(this.pageSize, this.order.length));
      await this.fetch({ limit });
    } catch (e) {
      this.error = e instanceof HeraldError ? e : new HeraldError({ code: 'network_error', message: String(e), status: 0 });
    } finally {
      this.syncing -= 1;
      this.lastSeq = seq;
      if (!this.syncing) {
        const q = this.queued;
        this.queued = [];
        for (const f of q) this.onFrame(f);
        if (this.liveAfterSync && this.socketLive && !this.syncing) {
          this.liveAfterSync = false;
          this.connection = 'live';
          this.emit({ type: 'connection', state: 'live' });
        }
      }
      this.emit({ type: 'meta', meta: this.displayedMeta() ?? { unread_count: 0, unseen_count: 0 } });
    }
  }
}
