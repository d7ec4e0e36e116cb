// <NotificationFeed>: the list of the user's feed entries — newest first,
// unread ones marked (visually and for screen readers), an entry read on
// click, "Mark all as read", archive, and infinite scroll: an
// IntersectionObserver loads the next page when the "Load more" button
// scrolls into view, and the button itself works where there is none.

import { useEffect, useId, useRef, type ReactNode, type Ref } from 'react';
import type { FeedEntry } from 'herald-client';
import { useFeed } from './useFeed.js';

export interface NotificationFeedProps {
  /** Called after a click on an entry has marked it read (e.g. to follow `entry.data.url`). */
  onEntryClick?: (entry: FeedEntry) => void;
  /** Replaces an entry's content (subject, body and time by default). */
  renderEntry?: (entry: FeedEntry) => ReactNode;
  /** The list's heading (default "Notifications"). */
  title?: string;
  /** Shown when the feed is empty. */
  emptyText?: string;
  /** The heading's id, e.g. for a dialog's aria-labelledby. */
  headingId?: string;
  /** Forwarded to the heading so a popover can move focus to it. */
  headingRef?: Ref<HTMLHeadingElement>;
  className?: string;
}

function relativeTime(iso: string, now = Date.now()): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return '';
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  return new Date(iso).toLocaleDateString();
}

function DefaultEntry({ entry }: { entry: FeedEntry }) {
  return (
    <>
      <span className="herald-entry__subject">{entry.data.subject}</span>
      {entry.data.body ? <span className="herald-entry__body">{entry.data.body}</span> : null}
      <time className="herald-entry__time" dateTime={entry.created_at}>
        {relativeTime(entry.created_at)}
      </time>
    </>
  );
}

export function NotificationFeed({
  onEntryClick,
  renderEntry,
  title = 'Notifications',
  emptyText = 'You are all caught up.',
  headingId,
  headingRef,
  className,
}: NotificationFeedProps) {
  const feed = useFeed();
  const ownId = useId();
  const hid = headingId ?? `herald-feed-${ownId}`;
  const moreRef = useRef<HTMLButtonElement>(null);
  const { hasMore, loadMore, loadingMore } = feed;

  // infinite scroll: the "Load more" button doubles as the sentinel
  useEffect(() => {
    const el = moreRef.current;
    if (!el || !hasMore || typeof IntersectionObserver !== 'function') return;
    const io = new IntersectionObserver((records) => {
      if (records.some((r) => r.isIntersecting)) void loadMore();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasMore, loadMore, feed.entries.length]);

  const open = async (entry: FeedEntry) => {
    if (!entry.read) await feed.markRead(entry.id);
    onEntryClick?.(entry);
  };

  return (
    <section className={['herald-feed', className].filter(Boolean).join(' ')} aria-labelledby={hid}>
      <div className="herald-feed__header">
        <h2 className="herald-feed__title" id={hid} ref={headingRef} tabIndex={-1}>
          {title}
        </h2>
        <button
          type="button"
          className="herald-button herald-feed__mark-all"
          onClick={() => void feed.markAllRead()}
          disabled={feed.unreadCount === 0}
        >
          Mark all as read
        </button>
      </div>
      {feed.error ? (
        <p className="herald-feed__error" role="alert">
          {feed.error.message}
        </p>
      ) : null}
      {feed.loading ? (
        <p className="herald-feed__status" role="status">
          Loading…
        </p>
      ) : feed.entries.length === 0 ? (
        <p className="herald-feed__status">{emptyText}</p>
      ) : (
        <ul className="herald-feed__list">
          {feed.entries.map((e) => (
            <li key={e.id} className={`herald-entry ${e.read ? 'herald-entry--read' : 'herald-entry--unread'}`} data-id={e.id}>
              <button type="button" className="herald-entry__main" onClick={() => void open(e)}>
                {!e.read ? <span className="herald-visually-hidden">Unread: </span> : null}
                {renderEntry ? renderEntry(e) : <DefaultEntry entry={e} />}
              </button>
              <button
                type="button"
                className="herald-entry__archive"
                onClick={() => void feed.markArchived(e.id)}
                aria-label={`Archive: ${e.data.subject}`}
                title="Archive"
              >
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {hasMore ? (
        <button
          type="button"
          ref={moreRef}
          className="herald-button herald-feed__more"
          onClick={() => void loadMore()}
          disabled={loadingMore}
        >
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}
