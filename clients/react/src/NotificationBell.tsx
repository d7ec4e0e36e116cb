// <NotificationBell>: a button with the unread count as a badge that opens and
// closes the feed in a popover. Accessible: the button says how many are
// unread (aria-label) and whether the popover is open (aria-expanded,
// aria-controls); changes of the count are announced by a polite live
// region; opening moves focus into the feed, Escape or a click outside closes
// it and Escape gives focus back to the button.

import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { NotificationFeed, type NotificationFeedProps } from './NotificationFeed.js';
import { useFeed } from './useFeed.js';

export interface NotificationBellProps {
  /** What the popover shows instead of the default <NotificationFeed>. */
  children?: ReactNode;
  /** Props for the default <NotificationFeed>. */
  feedProps?: NotificationFeedProps;
  /** The button's name (default "Notifications"); the unread count is added to it. */
  label?: string;
  /** Counts above this show as `max+` (default 99). */
  max?: number;
  /** What the badge counts: `unread` entries (default) or `unseen` ones ("new"). */
  count?: 'unread' | 'unseen';
  /** Marks every entry seen when the feed opens (pairs with `count="unseen"`). */
  markSeenOnOpen?: boolean;
  /** Controlled open state (optional). */
  open?: boolean;
  onOpenChange?: (open: boolean) => void;
  className?: string;
}

function BellIcon() {
  return (
    <svg className="herald-bell__icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path
        fill="currentColor"
        d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
      />
    </svg>
  );
}

export function NotificationBell({
  children,
  feedProps,
  label = 'Notifications',
  max = 99,
  count = 'unread',
  markSeenOnOpen = false,
  open: openProp,
  onOpenChange,
  className,
}: NotificationBellProps) {
  const { unreadCount, unseenCount, connection, markAllSeen } = useFeed();
  const n = count === 'unseen' ? unseenCount : unreadCount;
  const word = count === 'unseen' ? 'new' : 'unread';
  const [openState, setOpenState] = useState(false);
  const open = openProp ?? openState;
  const id = useId();
  const panelId = `herald-panel-${id}`;
  const headingId = `herald-heading-${id}`;
  const buttonRef = useRef<HTMLButtonElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);

  const setOpen = useCallback(
    (v: boolean) => {
      if (openProp === undefined) setOpenState(v);
      onOpenChange?.(v);
    },
    [openProp, onOpenChange],
  );

  // focus goes into the panel when it opens (to its heading: the list follows)
  useEffect(() => {
    if (open) (headingRef.current ?? panelRef.current)?.focus();
  }, [open]);

  // an open feed shows every entry, so they are seen, and so is one that
  // arrives while it stays open; a count already tried (a refused request,
  // rolled back) is not retried in a loop
  const triedSeen = useRef<number | null>(null);
  useEffect(() => {
    if (!open) triedSeen.current = null;
    else if (markSeenOnOpen && unseenCount > 0 && triedSeen.current !== unseenCount) {
      triedSeen.current = unseenCount;
      void markAllSeen();
    }
  }, [open, markSeenOnOpen, unseenCount, markAllSeen]);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    const onPointer = (e: PointerEvent) => {
      if (rootRef.current && !rootRef.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open, setOpen]);

  const shown = n > max ? `${max}+` : String(n);
  const name = n > 0 ? `${label}, ${n} ${word}` : `${label}, none ${word}`;

  return (
    <div className={['herald-bell', className].filter(Boolean).join(' ')} ref={rootRef} data-connection={connection}>
      <button
        type="button"
        ref={buttonRef}
        className="herald-bell__button"
        aria-label={name}
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen(!open)}
      >
        <BellIcon />
        {n > 0 ? (
          <span className="herald-bell__badge" aria-hidden="true">
            {shown}
          </span>
        ) : null}
      </button>
      {/* announced when the count changes; the button's name says it on focus */}
      <span className="herald-visually-hidden" aria-live="polite" aria-atomic="true">
        {n > 0 ? `${n} ${word} notification${n === 1 ? '' : 's'}` : ''}
      </span>
      <div
        id={panelId}
        ref={panelRef}
        className="herald-bell__panel"
        role="region"
        aria-labelledby={children ? undefined : headingId}
        aria-label={children ? label : undefined}
        tabIndex={-1}
        hidden={!open}
      >
        {open ? children ?? <NotificationFeed {...feedProps} headingId={headingId} headingRef={headingRef} /> : null}
      </div>
    </div>
  );
}
