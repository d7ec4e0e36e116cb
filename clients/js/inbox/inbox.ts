// Herald's built-in /inbox page, built on herald-client: the user's feed kept
// live over the WebSocket (unread badge, mark read, mark all read, archive,
// infinite scroll, a reconnect indicator). Bundled by scripts/bundle-inbox.mjs
// into src/inbox/inbox.js, which the herald binary compiles in.
// Page parameters: api_key (required), user_id (development mode) or user_key
// (a JWT), base (the Herald origin; defaults to this page's origin).

import { Herald, HeraldError, type FeedEntry, type FeedState } from '../src/index.js';

const params = new URLSearchParams(location.search);
const apiKey = params.get('api_key') || '';
const userId = params.get('user_id') || '';
const userKey = params.get('user_key') || '';
const base = (params.get('base') || location.origin).replace(/\/+$/, '');

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const els = {
  badge: $('badge'),
  entries: $<HTMLUListElement>('entries'),
  status: $('status'),
  message: $('message'),
  empty: $('empty'),
  readAll: $<HTMLButtonElement>('read-all'),
  more: $('more'),
};

const STATUS_TEXT: Record<string, string> = {
  idle: 'offline',
  connecting: 'connecting',
  live: 'live',
  offline: 'offline',
  unauthorized: 'signed out',
  evicted: 'closed',
};

function showMessage(text: string) {
  els.message.textContent = text;
  els.message.hidden = !text;
}

function describe(e: unknown): string {
  return e instanceof HeraldError ? e.message : e instanceof Error ? e.message : String(e);
}

function ago(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return Math.max(1, Math.round(s / 60)) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  if (s < 7 * 86400) return Math.round(s / 86400) + ' d ago';
  return new Date(t).toLocaleDateString();
}

function fill(li: HTMLLIElement, e: FeedEntry) {
  const data = e.data || ({} as FeedEntry['data']);
  const key = JSON.stringify([e.read, data.subject, data.body, e.created_at]);
  li.className = 'entry ' + (e.read ? 'read' : 'unread');
  if (li.dataset.key === key) return;
  li.dataset.key = key;
  li.dataset.id = e.id;
  li.tabIndex = 0;
  li.setAttribute('role', 'button');
  li.setAttribute('aria-label', (e.read ? '' : 'Unread: ') + (data.subject || data.body || 'notification'));
  li.replaceChildren();
  if (data.subject) {
    const p = document.createElement('p');
    p.className = 'subject';
    p.textContent = data.subject;
    li.append(p);
  }
  if (data.body) {
    const p = document.createElement('p');
    p.className = 'body';
    p.textContent = data.body;
    li.append(p);
  }
  const foot = document.createElement('div');
  foot.className = 'foot';
  const time = document.createElement('time');
  time.dateTime = e.created_at;
  time.title = e.created_at;
  time.textContent = ago(e.created_at);
  const archive = document.createElement('button');
  archive.type = 'button';
  archive.className = 'archive';
  archive.textContent = 'Archive';
  archive.setAttribute('aria-label', 'Archive ' + (data.subject || 'notification'));
  foot.append(time, archive);
  li.append(foot);
}

/** Puts the list in the store's order, reusing the elements of entries already shown. */
function renderList(items: FeedEntry[]) {
  const existing = new Map<string, HTMLLIElement>();
  for (const li of Array.from(els.entries.children) as HTMLLIElement[]) existing.set(li.dataset.id || '', li);
  let at: Element | null = els.entries.firstElementChild;
  for (const e of items) {
    let li = existing.get(e.id);
    existing.delete(e.id);
    if (!li) li = document.createElement('li');
    fill(li, e);
    if (li !== at) els.entries.insertBefore(li, at);
    else at = at.nextElementSibling;
  }
  for (const li of existing.values()) li.remove();
}

let lastBadge = -1;
function render(state: FeedState) {
  renderList(state.items);
  els.empty.hidden = state.items.length > 0 || state.meta === null;
  const n = state.meta ? state.meta.unread_count : 0;
  if (n !== lastBadge) {
    lastBadge = n;
    els.badge.textContent = String(n);
    els.badge.dataset.count = String(n);
    document.title = (n > 0 ? '(' + n + ') ' : '') + 'Inbox · Herald';
  }
  els.readAll.disabled = n === 0;
  els.more.hidden = !state.hasMore;
  const text = STATUS_TEXT[state.connection] || state.connection;
  if (els.status.textContent !== text) els.status.textContent = text;
  els.status.dataset.state = state.connection;
  if (state.connection === 'unauthorized') {
    showMessage('Not signed in: ' + (state.error ? describe(state.error) : 'authentication failed'));
  } else if (state.connection === 'evicted') {
    showMessage('This inbox is open in too many tabs; reload to reconnect here.');
  }
}

function start() {
  if (!apiKey || !(userId || userKey)) {
    els.status.textContent = 'offline';
    els.status.dataset.state = 'offline';
    showMessage('Open this page with ?api_key=…&user_id=… (or user_key=…).');
    return;
  }
  const herald = new Herald({ baseUrl: base, publicKey: apiKey, userToken: userKey || undefined, userId: userId || undefined });
  const feed = herald.feed;

  feed.subscribe((state, event) => {
    render(state);
    if (event.type === 'connection') {
      if (event.state === 'live') showMessage('');
      els.status.title =
        event.state === 'offline' && event.retryInMs !== undefined
          ? 'reconnecting in ' + Math.max(1, Math.round(event.retryInMs / 1000)) + ' s'
          : '';
    }
  });
  feed.fetch().then(
    () => render(feed.state),
    (e) => showMessage('Could not load the feed: ' + describe(e)),
  );

  const act = (p: Promise<unknown>, what: string) =>
    p.then(
      () => render(feed.state),
      (e) => {
        render(feed.state);
        showMessage('Could not ' + what + ': ' + describe(e));
      },
    );

  function onEntry(target: EventTarget | null) {
    const el = target as HTMLElement | null;
    const li = el && (el.closest('.entry') as HTMLLIElement | null);
    if (!li || !li.dataset.id) return;
    const id = li.dataset.id;
    if (el!.closest('.archive')) {
      act(feed.archive(id), 'archive');
      return;
    }
    const entry = feed.state.items.find((x) => x.id === id);
    if (entry && !entry.read) act(feed.markRead(id), 'mark as read');
  }
  els.entries.addEventListener('click', (ev) => onEntry(ev.target));
  els.entries.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') {
      if ((ev.target as HTMLElement).closest('.archive')) return; // the button's own click
      ev.preventDefault();
      onEntry(ev.target);
    }
  });
  els.readAll.addEventListener('click', () => act(feed.markAllRead(), 'mark everything read'));

  // infinite scroll: the "more" row coming into view loads the next page
  let loading = false;
  const loadMore = () => {
    if (loading || !feed.state.hasMore) return;
    loading = true;
    feed
      .fetchNextPage()
      .catch((e) => showMessage('Could not load more: ' + describe(e)))
      .finally(() => {
        loading = false;
        render(feed.state);
        // still in view (a tall window): keep going
        const r = els.more.getBoundingClientRect();
        if (!els.more.hidden && r.top < window.innerHeight) loadMore();
      });
  };
  new IntersectionObserver((es) => {
    if (es.some((x) => x.isIntersecting)) loadMore();
  }).observe(els.more);

  setInterval(() => {
    for (const t of Array.from(els.entries.querySelectorAll('time'))) t.textContent = ago(t.dateTime);
  }, 30000);
}

start();
