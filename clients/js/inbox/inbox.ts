// Herald's built-in /inbox page, built on herald-client: the user's feed kept
// live over the WebSocket (unread badge, mark read, mark all read, archive,
// archive all, action buttons, a tab per preference category, the user's
// preferences, infinite scroll, a reconnect indicator). Bundled by scripts/bundle-inbox.mjs
// into src/inbox/inbox.js, which the herald binary compiles in.
// Page parameters: api_key (required), user_id (development mode) or user_key
// (a JWT), base (the Herald origin; defaults to this page's origin).

import { Feed, Herald, HeraldError, type FeedEntry, type FeedState, type Preferences, type QuietHours } from '../src/index.js';

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
  archiveAll: $<HTMLButtonElement>('archive-all'),
  tabs: $('tabs'),
  prefsToggle: $<HTMLButtonElement>('prefs-toggle'),
  prefs: $<HTMLFormElement>('prefs'),
  prefsFields: $('prefs-fields'),
  prefsStatus: $('prefs-status'),
  more: $('more'),
};

const CHANNEL_TYPES = ['in_app', 'email', 'sms', 'mobile_push', 'web_push', 'chat'] as const;

/** A labelled checkbox named `name` (`ct.email`, `category.billing`, `flow.digest`). */
function box(name: string, text: string, on: boolean, disabled = false): HTMLLabelElement {
  const label = document.createElement('label');
  const input = document.createElement('input');
  input.type = 'checkbox';
  input.name = name;
  input.checked = on;
  input.disabled = disabled;
  label.append(input, document.createTextNode(text));
  return label;
}

function fieldset(legend: string, boxes: HTMLElement[]): HTMLFieldSetElement {
  const f = document.createElement('fieldset');
  const l = document.createElement('legend');
  l.textContent = legend;
  f.append(l, ...boxes);
  return f;
}

/** The preferences form: channel types, categories, the flows outside any category. */
function renderPrefs(p: Preferences) {
  const parts = [
    fieldset('Channels', CHANNEL_TYPES.map((t) => box('ct.' + t, t.replace('_', ' '), p.channel_types[t]))),
  ];
  const cats = Object.entries(p.categories || {});
  if (cats.length) parts.push(fieldset('Categories', cats.map(([h, c]) => box('category.' + h, c.name, c.enabled))));
  const own = Object.entries(p.flows).filter(([, f]) => !f.categories.length);
  if (own.length) {
    parts.push(fieldset('Notifications', own.map(([h, f]) => box('flow.' + h, f.name, f.enabled, !!f.critical))));
  }
  // quiet hours: on or off, from and to (days and timezone kept)
  const q = p.quiet_hours as { from?: string; to?: string } | null;
  const time = (name: string, text: string, value: string) => {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'time';
    input.name = name;
    input.value = value;
    label.append(document.createTextNode(text + ' '), input);
    return label;
  };
  parts.push(
    fieldset('Quiet hours', [
      box('qh', 'Pause all but in-app', !!q),
      time('qh.from', 'from', q?.from ?? '22:00'),
      time('qh.to', 'to', q?.to ?? '07:00'),
    ]),
  );
  quietHoursHad = (p.quiet_hours as QuietHours | null) ?? null;
  els.prefsFields.replaceChildren(...parts);
}

/** The quiet hours the form was made from (their days and timezone are kept). */
let quietHoursHad: QuietHours | null = null;

/** The update the form says: every box it shows (critical flows never). */
type PrefsUpdate = {
  channel_types: Record<string, boolean>;
  categories: Record<string, { enabled: boolean }>;
  flows: Record<string, { enabled: boolean }>;
  quiet_hours?: QuietHours | null;
};

function prefsUpdate(): PrefsUpdate {
  const u: PrefsUpdate = { channel_types: {}, categories: {}, flows: {} };
  for (const input of Array.from(els.prefs.querySelectorAll<HTMLInputElement>('input[type=checkbox]'))) {
    if (input.disabled || input.name === 'qh') continue;
    const [kind, key] = [input.name.slice(0, input.name.indexOf('.')), input.name.slice(input.name.indexOf('.') + 1)];
    if (kind === 'ct') u.channel_types[key] = input.checked;
    else if (kind === 'category') u.categories[key] = { enabled: input.checked };
    else if (kind === 'flow') u.flows[key] = { enabled: input.checked };
  }
  const field = (n: string) => els.prefs.querySelector<HTMLInputElement>(`input[name="${n}"]`);
  const on = field('qh')?.checked;
  const from = field('qh.from')?.value;
  const to = field('qh.to')?.value;
  u.quiet_hours = on && from && to ? { days: quietHoursHad?.days ?? null, timezone: quietHoursHad?.timezone ?? null, from, to } : null;
  return u;
}

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
  const actions = data.actions || [];
  const key = JSON.stringify([e.read, data.subject, data.body, e.created_at, actions, e.interacted_action]);
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
  if (actions.length) {
    const row = document.createElement('div');
    row.className = 'actions';
    actions.forEach((a, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'action' + (e.interacted_action === i ? ' pressed' : '');
      b.dataset.action = String(i);
      b.textContent = a.label;
      b.setAttribute('aria-pressed', String(e.interacted_action === i));
      row.append(b);
    });
    li.append(row);
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

/** Each tab's unread badge, by category handle ('' for All). */
const tabBadges = new Map<string, HTMLSpanElement>();

function renderTabBadges(state: FeedState) {
  for (const [handle, span] of tabBadges) {
    const n = handle === '' ? (state.meta ? state.meta.unread_count : 0) : (state.byCategory?.[handle]?.unread_count ?? 0);
    const text = n > 0 ? String(n) : '';
    if (span.textContent !== text) span.textContent = text;
    span.hidden = n === 0;
  }
}

let lastBadge = -1;
function render(state: FeedState) {
  renderList(state.items);
  renderTabBadges(state);
  els.empty.hidden = state.items.length > 0 || state.meta === null;
  const n = state.meta ? state.meta.unread_count : 0;
  if (n !== lastBadge) {
    lastBadge = n;
    els.badge.textContent = String(n);
    els.badge.dataset.count = String(n);
    document.title = (n > 0 ? '(' + n + ') ' : '') + 'Inbox · Herald';
  }
  els.readAll.disabled = n === 0;
  els.archiveAll.disabled = state.items.length === 0;
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
  // one store per tab: "All" is the client's own feed, each category its own
  // (only the shown one is subscribed, so one socket at a time)
  let feed: Feed = herald.feed;
  let unsubscribe: () => void = () => {};
  const stores = new Map<string, Feed>([['', herald.feed]]);

  function show(next: Feed) {
    unsubscribe();
    feed = next;
    els.entries.replaceChildren();
    unsubscribe = feed.subscribe((state, event) => {
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
  }
  show(herald.feed);

  // the tabs: "All", then each preference category of the project
  herald.getPreferences().then(
    (prefs) => {
      const cats = Object.entries(prefs.categories || {});
      if (!cats.length) return;
      const tabs: HTMLButtonElement[] = [];
      for (const [handle, c] of [['', { name: 'All' }] as const, ...cats]) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'tab';
        b.setAttribute('role', 'tab');
        b.setAttribute('aria-selected', String(handle === ''));
        b.dataset.category = handle;
        const name = document.createElement('span');
        name.className = 'tab-name';
        name.textContent = c.name;
        b.append(name);
        // its unread count, from the counts per category (`meta.by_category`)
        const count = document.createElement('span');
        count.className = 'tab-count';
        count.hidden = true;
        b.append(' ', count);
        tabBadges.set(handle, count);
        b.addEventListener('click', () => {
          for (const t of tabs) t.setAttribute('aria-selected', String(t === b));
          let store = stores.get(handle);
          if (!store) {
            store = herald.createFeed({ category: handle });
            stores.set(handle, store);
          }
          show(store);
        });
        tabs.push(b);
      }
      els.tabs.replaceChildren(...tabs);
      els.tabs.hidden = false;
      renderTabBadges(feed.state);
    },
    () => {}, // no tabs: the feed works without them
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
    const press = el!.closest('.action') as HTMLElement | null;
    if (press) {
      const i = Number(press.dataset.action);
      const entry = feed.state.items.find((x) => x.id === id);
      const url = entry?.data.actions?.[i]?.url;
      act(feed.interact(id, i), 'press ' + (press.textContent || 'the button'));
      if (url && /^https?:\/\//i.test(url)) window.open(url, '_blank', 'noopener');
      return;
    }
    const entry = feed.state.items.find((x) => x.id === id);
    if (entry && !entry.read) act(feed.markRead(id), 'mark as read');
  }
  els.entries.addEventListener('click', (ev) => onEntry(ev.target));
  els.entries.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') {
      if ((ev.target as HTMLElement).closest('.archive, .action')) return; // the button's own click
      ev.preventDefault();
      onEntry(ev.target);
    }
  });
  els.readAll.addEventListener('click', () => act(feed.markAllRead(), 'mark everything read'));
  els.archiveAll.addEventListener('click', () => act(feed.archiveAll(), 'archive everything'));

  // the user's preferences, through the User API
  els.prefsToggle.addEventListener('click', () => {
    const open = els.prefs.hidden;
    els.prefsToggle.setAttribute('aria-expanded', String(open));
    els.prefsStatus.textContent = '';
    if (!open) {
      els.prefs.hidden = true;
      return;
    }
    herald.getPreferences().then(
      (p) => {
        renderPrefs(p);
        els.prefs.hidden = false;
      },
      (e) => showMessage('Could not load your preferences: ' + describe(e)),
    );
  });
  els.prefs.addEventListener('submit', (ev) => {
    ev.preventDefault();
    els.prefsStatus.textContent = 'Saving…';
    herald.setPreferences(prefsUpdate()).then(
      (p) => {
        renderPrefs(p);
        els.prefsStatus.textContent = 'Saved';
      },
      (e) => {
        els.prefsStatus.textContent = '';
        showMessage('Could not save your preferences: ' + describe(e));
      },
    );
  });

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
