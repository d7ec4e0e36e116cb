// useFeed(): the provider's feed store as React state — entries, unread and
// unseen counts, the live socket's state (herald-client keeps it in step and
// resumes with since_seq after a drop), paging and the entry actions.

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ConnectionState, FeedEntry, FeedState, HeraldError, MarkAllResult } from 'herald-client';
import { useHeraldContext } from './context.js';

export interface UseFeedResult {
  /** Loaded entries (not archived), newest first, optimistic changes applied. */
  entries: FeedEntry[];
  unreadCount: number;
  unseenCount: number;
  /** True until the first page (or the live socket's first sync) has come. */
  loading: boolean;
  /** A page is being loaded by `loadMore`. */
  loadingMore: boolean;
  hasMore: boolean;
  connection: ConnectionState;
  /** The last error of the socket, a refetch, or an action (actions are rolled back). */
  error: HeraldError | Error | null;
  /** Loads the next older page (no-op while one is loading or when none is left). */
  loadMore(): Promise<void>;
  markSeen(ids: string | string[]): Promise<void>;
  markRead(ids: string | string[]): Promise<void>;
  markArchived(ids: string | string[]): Promise<void>;
  markAllRead(): Promise<MarkAllResult | undefined>;
  markAllSeen(): Promise<MarkAllResult | undefined>;
}

/**
 * Subscribes to the provider's feed while mounted (the first subscriber opens
 * the live socket, the last one closes it; several components share it).
 */
export function useFeed(): UseFeedResult {
  const { feed } = useHeraldContext();
  const [state, setState] = useState<FeedState>(() => feed.state);
  const [loadingMore, setLoadingMore] = useState(false);
  const [actionError, setActionError] = useState<Error | null>(null);
  const paging = useRef(false);

  useEffect(() => {
    setState(feed.state);
    const unsubscribe = feed.subscribe((s) => setState(s));
    return unsubscribe;
  }, [feed]);

  // actions report failures through `error` rather than as unhandled rejections:
  // the store has already rolled the optimistic change back
  const run = useCallback(async <T,>(p: () => Promise<T>): Promise<T | undefined> => {
    try {
      const r = await p();
      setActionError(null);
      return r;
    } catch (e) {
      setActionError(e instanceof Error ? e : new Error(String(e)));
      return undefined;
    }
  }, []);

  const loadMore = useCallback(async () => {
    if (paging.current) return;
    paging.current = true;
    setLoadingMore(true);
    try {
      await run(() => feed.fetchNextPage());
    } finally {
      paging.current = false;
      setLoadingMore(false);
    }
  }, [feed, run]);

  const asList = (ids: string | string[]) => (Array.isArray(ids) ? ids : [ids]);
  const markSeen = useCallback(async (ids: string | string[]) => {
    await run(() => feed.markSeen(asList(ids)));
  }, [feed, run]);
  const markRead = useCallback(async (ids: string | string[]) => {
    await run(() => feed.markRead(asList(ids)));
  }, [feed, run]);
  const markArchived = useCallback(async (ids: string | string[]) => {
    await run(() => feed.archive(asList(ids)));
  }, [feed, run]);
  const markAllRead = useCallback(() => run(() => feed.markAllRead()), [feed, run]);
  const markAllSeen = useCallback(() => run(() => feed.markAllSeen()), [feed, run]);

  return {
    entries: state.items,
    unreadCount: state.meta?.unread_count ?? 0,
    unseenCount: state.meta?.unseen_count ?? 0,
    loading: state.meta === null,
    loadingMore,
    hasMore: state.hasMore,
    connection: state.connection,
    error: actionError ?? state.error,
    loadMore,
    markSeen,
    markRead,
    markArchived,
    markAllRead,
    markAllSeen,
  };
}
